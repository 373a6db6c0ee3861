"""Structured logs (structlog), one JSON object per line, appended under the state directory."""

from __future__ import annotations

import logging
from pathlib import Path

import structlog


def configure_logging(log_path: Path | None) -> None:
    """Send structlog events to ``log_path`` as JSON lines; without a path, drop them (stderr stays clean)."""
    if log_path is None:
        structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
        return
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(log_path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives as long as the process
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.WriteLoggerFactory(file=handle),
        cache_logger_on_first_use=False,
    )
