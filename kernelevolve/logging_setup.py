"""Structured logs (structlog), one JSON object per line, appended under the state directory."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import structlog


class WholeLineLog:
    """An append-only log file that never keeps part of a line: each line goes out in one ``os.write`` on an
    O_APPEND descriptor, and a write that fails part-way (a full disk) is cut back to where it began and the
    line dropped, so readers of the JSON lines never meet a torn one. Logging never fails a command."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.dropped = 0  # lines lost to write errors

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        try:
            start = os.fstat(self._fd).st_size
        except OSError:
            self.dropped += 1
            return
        done = 0
        try:
            while done < len(data):
                written = os.write(self._fd, data[done:])
                if written <= 0:
                    raise OSError("short write")
                done += written
        except OSError:
            self.dropped += 1
            if done:
                try:
                    os.ftruncate(self._fd, start)
                except OSError:
                    pass

    def flush(self) -> None:
        """Nothing is buffered."""


def configure_logging(log_path: Path | None) -> None:
    """Send structlog events to ``log_path`` as JSON lines; without a path, or where the log cannot be opened
    for appending (a read-only state directory that a read command only reads), drop them (stderr stays clean)."""
    if log_path is not None:
        try:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError:
            log_path = None
    if log_path is None:
        structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
        return
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.WriteLoggerFactory(file=WholeLineLog(fd)),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
