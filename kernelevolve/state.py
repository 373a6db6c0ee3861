"""Where a KernelEvolve installation keeps its state: the state directory, DuckDB file and object store."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from kernelevolve.errors import UserError

DEFAULT_STATE_DIR = ".kernelevolve"


@dataclass(frozen=True)
class StatePaths:
    root: Path
    store_url: str

    @property
    def db_path(self) -> Path:
        return self.root / "ke.duckdb"

    @property
    def scratch(self) -> Path:
        return self.root / "scratch"

    @property
    def log_path(self) -> Path:
        return self.root / "logs" / "ke.jsonl"


def resolve_state(state_dir: str | None, store_url: str | None) -> StatePaths:
    root = Path(state_dir or os.environ.get("KE_STATE_DIR") or DEFAULT_STATE_DIR).expanduser()
    url = store_url or os.environ.get("KE_STORE_URL") or str(root / "artifacts")
    return StatePaths(root=root.resolve(), store_url=url)


def ensure_writable(root: Path) -> None:
    """Fail with one line, before anything is written, if the state directory cannot be used."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{uuid.uuid4().hex}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise UserError(f"state directory {root} is not writable: {exc.strerror or exc}") from None
