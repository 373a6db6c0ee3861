"""Baseline cache: ``torch.compile`` of the reference is timed once per (spec, case, device, software
versions), not in every evaluation.

What is cached is the compile/eager *ratio*, measured interleaved. Later evaluations time only the
candidate and eager, interleaved, and derive compile time from eager: the drift-cancelling property of
interleaving is kept (eager is the in-session anchor) while the compile cost is paid once.
A plain-file cache (one JSON per key) so the evaluator needs no database on a bare GPU host.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_HELD: set[tuple[str, int]] = set()  # (key, thread) claims this process holds


def cache_key(spec_hash: str, case: str, device_name: str, versions: dict[str, str]) -> str:
    text = json.dumps([spec_hash, case, device_name, sorted(versions.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class BaselineCache:
    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        self.directory = Path(directory) if directory else None

    def get(self, key: str) -> dict[str, Any] | None:
        if self.directory is None:
            return None
        path = self.directory / f"{key}.json"
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold ``key`` while measuring it, so slots that miss the same key wait for one measurement."""
        if self.directory is None:
            yield
            return
        mine = (key, threading.get_ident())
        if mine in _HELD:  # flock is per open file: a nested claim of a held key would wait on itself forever
            yield
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / f".{key}.lock", "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            _HELD.add(mine)
            try:
                yield
            finally:
                _HELD.discard(mine)
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def drop(self, key: str) -> None:
        if self.directory is not None:
            (self.directory / f"{key}.json").unlink(missing_ok=True)

    def put(self, key: str, entry: dict[str, Any]) -> None:
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
        with os.fdopen(fd, "w") as handle:
            json.dump(entry, handle)
        os.replace(tmp, self.directory / f"{key}.json")
