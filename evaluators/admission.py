"""Admission to a GPU's memory: an evaluation reserves its estimated peak before it runs, across every
evaluation process on the host, and waits while it would not fit.

Why: slots that share a GPU overlap their CPU work, but at KernelBench's published sizes (6 GB inputs) two
evaluations at once exceed 80 GB. Without admission they collided: on an H100, 14 of 72 nodes failed with
CUDA out-of-memory, each charged to its kernel as a runtime error (issue #28). With it, a node that does not
fit beside the others waits for them, and one that cannot fit even alone ends as ``too_large``, which is the
device's verdict, not the kernel's.

How: a ledger file per physical device (next to the timing lock, :mod:`evaluators.device_lock`) maps each
holder to its bytes, read and written under an exclusive ``flock``. Holders are keyed by process id (and a
label), and an entry whose process is gone is dropped on the next read, so a killed evaluation never wedges
the device. Two kinds of entry: *resident* bytes a slot holds for its whole life (its CUDA contexts, its
reference cache) and *node* bytes for one evaluation. Stdlib only, like the rest of ``evaluators``' plumbing.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evaluators.device_lock import physical_device

GIB = 1 << 30
PEAK_RATIO = 3.0  # an evaluation's peak, in units of its case's bytes (measured: benchmarks/eval_memory.py)
PEAK_SLACK = 1 << 30  # plus this: allocator rounding, compare chunks, the L2 flush buffer, kernels' scratch
HEADROOM = 2 << 30  # never lent: the driver's own use and fragmentation
CONTEXT_BYTES = 600 << 20  # one process's CUDA context outside torch's allocator (an H100, torch 2.11)
POLL_S = 0.25


class TooLarge(Exception):
    """The evaluation cannot fit on the device even with no other evaluation on it (one-line message)."""


def estimated_peak(case_bytes: int) -> int:
    """The device memory one evaluation of a case of ``case_bytes`` (inputs, outputs, parameters) needs."""
    return int(PEAK_RATIO * case_bytes) + PEAK_SLACK


def ledger_path(device_index: int) -> Path:
    folder = Path(os.environ.get("KE_DEVICE_LOCK_DIR", tempfile.gettempdir()))
    return folder / f"ke-memory-gpu-{physical_device(device_index)}.json"


@dataclass
class Ledger:
    """The reservations on one device, shared through a file by every process on the host."""

    path: Path
    capacity: int  # bytes evaluations may use in all: the device's memory less HEADROOM

    @classmethod
    def for_device(cls, device_index: int, total_bytes: int) -> Ledger:
        stated = os.environ.get("KE_DEVICE_CAPACITY_BYTES")  # a stated capacity (tests; a GPU shared with others)
        capacity = int(stated) if stated else max(0, total_bytes - HEADROOM)
        return cls(ledger_path(device_index), capacity)

    @contextmanager
    def _locked(self) -> Iterator[dict[str, dict[str, int]]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                handle.seek(0)
                try:
                    entries = json.loads(handle.read() or "{}")
                except json.JSONDecodeError:
                    entries = {}
                entries = {k: v for k, v in entries.items() if isinstance(v, dict) and _alive(k)}
                yield entries
                handle.seek(0)
                handle.truncate()
                handle.write(json.dumps(entries))
                handle.flush()
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def set_resident(self, holder: str, nbytes: int) -> None:
        """What ``holder`` keeps on the device for its life (0 removes it)."""
        with self._locked() as entries:
            entries.setdefault(holder, {})["resident"] = int(nbytes)
            _forget(entries, holder)

    def usage(self) -> tuple[int, int]:
        """(resident bytes of every holder, node bytes reserved now)."""
        with self._locked() as entries:
            return _sum(entries, "resident"), _sum(entries, "node")

    @contextmanager
    def reserve(self, holder: str, nbytes: int, on_wait: Callable[[float], None] | None = None,
                timeout_s: float | None = None) -> Iterator[float]:
        """Hold ``nbytes`` for one evaluation; yields the seconds waited. Raises :class:`TooLarge` when it can
        never fit (more than the capacity less every slot's resident bytes), and ``TimeoutError`` after
        ``timeout_s`` of waiting. ``on_wait(seconds)`` is called about every 10 s while waiting."""
        started, last_note, since = time.monotonic(), 0.0, time.time()
        while True:
            with self._locked() as entries:
                resident, reserved = _sum(entries, "resident"), _sum(entries, "node")
                free_alone = self.capacity - resident
                entry = entries.setdefault(holder, {})
                if nbytes > free_alone:
                    _forget(entries, holder, "want", "since")
                    raise TooLarge(f"needs {_gib(nbytes)} of device memory, the device has {_gib(free_alone)} for "
                                   f"evaluations ({_gib(self.capacity)} less {_gib(resident)} held by its slots)")
                # first come, first served: a node may pass older waiters only where they would still fit
                older = sum(int(e.get("want", 0)) for k, e in entries.items()
                            if k != holder and float(e.get("since", since)) < since)
                if resident + reserved + older + nbytes <= self.capacity:
                    entry["node"] = int(nbytes)
                    _forget(entries, holder, "want", "since")
                    break
                entry.update(want=int(nbytes), since=since)
            waited = time.monotonic() - started
            if timeout_s is not None and waited > timeout_s:
                with self._locked() as entries:
                    _forget(entries, holder, "want", "since")
                raise TimeoutError(f"waited {waited:.0f} s for {_gib(nbytes)} of device memory")
            if on_wait is not None and waited - last_note >= 10.0:
                on_wait(waited)
                last_note = waited
            time.sleep(POLL_S)
        try:
            yield time.monotonic() - started
        finally:
            with self._locked() as entries:
                _forget(entries, holder, "node")


def _alive(holder: str) -> bool:
    try:
        pid = int(holder.split(":", 1)[0])
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    try:  # a zombie has exited: its memory is gone
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _forget(entries: dict[str, dict[str, int]], holder: str, *keys: str) -> None:
    """Drop ``keys`` of a holder's entry, and the entry once it holds nothing."""
    entry = entries.get(holder, {})
    for key in keys:
        entry.pop(key, None)
    if not any(entry.get(k) for k in ("resident", "node", "want")):
        entries.pop(holder, None)


def _sum(entries: dict[str, dict[str, int]], kind: str) -> int:
    return sum(int(e.get(kind, 0)) for e in entries.values())


def _gib(nbytes: int) -> str:
    return f"{nbytes / GIB:.1f} GiB"
