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
    """The state directory and store URL from the flags, else the environment, else the defaults; each is
    checked (``kernelevolve.inputs``) without touching the disk or the network, so bad input is refused
    before anything is written."""
    from kernelevolve import inputs

    raw_root, root_origin = _chosen(state_dir, "--state-dir", "KE_STATE_DIR", DEFAULT_STATE_DIR)
    root = inputs.folder_to_create(raw_root, "state directory", root_origin)
    raw_url, url_origin = _chosen(store_url, "--store-url", "KE_STORE_URL", str(root / "artifacts"))
    return StatePaths(root=root.resolve(), store_url=inputs.store_url(raw_url, url_origin))


def _chosen(flag_value: str | None, flag: str, env: str, default: str) -> tuple[str, str | None]:
    """(value, where it came from): the flag, else the environment variable, else the default (no origin)."""
    if flag_value:
        return flag_value, flag
    if os.environ.get(env):
        return os.environ[env], env
    return default, None


def ensure_writable(root: Path) -> None:
    """Fail with one line, before anything is written, if the state directory cannot be used."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{uuid.uuid4().hex}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise UserError(f"state directory {root} is not writable: {exc.strerror or exc}") from None
