"""One process at a time per run: ``ke search`` holds an exclusive flock on ``<state>/locks/<run>.lock``
for as long as it drives the run. The kernel drops a flock when its process dies, however it dies, so a
crashed search never leaves a run claimed; a second ``--resume`` of a held run is refused in one line
before it writes anything (two at once overwrote each other's artifacts, then one failed on a duplicate
node)."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from kernelevolve.errors import StoreFailure, UserError

_HELD: dict[str, int] = {}  # run id -> the open, locked descriptor; kept for the life of the process


def lock_path(state_root: Path, run_id: str) -> Path:
    return state_root / "locks" / f"{run_id}.lock"


def hold_run(state_root: Path, run_id: str) -> None:
    """Claim ``run_id`` for this process until it exits (or :func:`release_run`); refuse a run held elsewhere."""
    if run_id in _HELD:
        return
    path = lock_path(state_root, run_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except PermissionError as exc:  # read-only state: resuming would write, so it is refused like a new search
        raise UserError(f"state directory {state_root} is not writable: {exc.strerror or exc} ({path}); "
                        f"run {run_id} cannot be resumed from it") from None
    except OSError as exc:
        if exc.errno == errno.EROFS:
            raise UserError(f"state directory {state_root} is not writable: {exc.strerror}") from None
        raise StoreFailure(f"cannot claim run {run_id}: cannot open {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(fd)
        os.close(fd)
        raise UserError(f"run {run_id} is being driven by another process{holder}; wait for it to end, "
                        f"or stop it first") from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    _HELD[run_id] = fd


def release_run(run_id: str) -> None:
    """Give a run back before the process exits (tests, and commands that drive several runs in turn)."""
    fd = _HELD.pop(run_id, None)
    if fd is not None:
        os.close(fd)


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
