"""One timing at a time per GPU, across every evaluation process on the host.

Why: a sweep or campaign runs several evaluations at once to overlap their CPU work (imports, Triton and
Inductor compilation, correctness checks), but two processes timing kernels on one GPU share its SMs and
memory bandwidth and both measure nonsense. An exclusive ``flock`` per device, held only around the timed
loop, keeps the overlap and the numbers. A lock file (not a Ray or multiprocessing primitive) because the
evaluators are separate processes started by different executors, and the kernel drops the lock when its
holder dies, so a crashed candidate cannot wedge the GPU. Stdlib only, like the rest of ``evaluators``.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

_VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def physical_device(device_index: int) -> str:
    """The physical device behind a process-local index: a Ray actor given GPU 2 sees it as device 0 with
    CUDA_VISIBLE_DEVICES=2, and must lock the same file as a process that sees all GPUs and uses index 2."""
    for var in _VISIBLE_VARS:
        visible = [v.strip() for v in os.environ.get(var, "").split(",") if v.strip()]
        if visible:
            return visible[device_index] if device_index < len(visible) else f"{var}-{device_index}"
    return str(device_index)


def lock_path(device_index: int) -> Path:
    folder = Path(os.environ.get("KE_DEVICE_LOCK_DIR", tempfile.gettempdir()))
    return folder / f"ke-timing-gpu-{physical_device(device_index)}.lock"


def gate_path(device_index: int) -> Path:
    """The turnstile a timing holds while it waits for the device, so no new shared holder slips in first."""
    return lock_path(device_index).with_suffix(".gate")


def phases_locked() -> bool:
    """Whether checks, judges and warm-ups also take the device (shared), so no timing runs beside them: the
    default (``phases``). With ``KE_GPU_LOCK=timing`` only timings exclude each other, which is faster and,
    on an H200 (``benchmarks/results/timing_isolation_h200_locks.md``), moved a transformer block's timing by 8%
    and a 6 GB elementwise op's by 22% beside an 8-slot search, against 0.0% with the lock (issue #31)."""
    return os.environ.get("KE_GPU_LOCK", "phases") != "timing"


class _Hold:
    """One flock on a device's lock file, taken through the gate; it can be let go and taken again."""

    def __init__(self, device_index: int, mode: int) -> None:
        self.device_index, self.mode = device_index, mode
        self.handle: IO[str] | None = None

    def take(self) -> float:
        """Pass the gate, take the device lock in this hold's mode, then leave the gate; returns the wait."""
        started = time.monotonic()
        path = lock_path(self.device_index)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(gate_path(self.device_index), "a+") as gate:
            fcntl.flock(gate.fileno(), fcntl.LOCK_EX)
            try:
                handle = open(path, "a+")  # noqa: SIM115 - held across take() and let_go()
                fcntl.flock(handle.fileno(), self.mode)
                self.handle = handle
            finally:
                fcntl.flock(gate.fileno(), fcntl.LOCK_UN)
        return time.monotonic() - started

    def let_go(self) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None


_shared_holds: list[_Hold] = []  # this process's shared holds, innermost last
_host_work_wait = [0.0]  # seconds spent taking shared holds back after host-only work


@contextmanager
def exclusive_device(device_index: int) -> Iterator[float]:
    """Hold the device's timing lock; yields the seconds spent waiting for it.

    Writer priority: the timing takes the gate first and keeps it until it holds the device, so shared holders
    that arrive meanwhile queue behind it instead of starving it."""
    hold = _Hold(device_index, fcntl.LOCK_EX)
    waited = hold.take()
    try:
        yield waited
    finally:
        hold.let_go()


@contextmanager
def shared_device(device_index: int | None) -> Iterator[float]:
    """Hold the device beside other checks, judges and compiles but never beside a timing; yields the wait.

    A no-op unless :func:`phases_locked`, or for ``None`` (the cpu target). Passing the gate (briefly) is what
    lets a waiting timing go first."""
    if device_index is None or not phases_locked():
        yield 0.0
        return
    hold = _Hold(device_index, fcntl.LOCK_SH)
    waited = hold.take()
    _shared_holds.append(hold)
    try:
        yield waited
    finally:
        _shared_holds.remove(hold)
        hold.let_go()


def holding_shared() -> bool:
    """Whether this process holds a device shared at the moment (a check, judge or warm-up is running)."""
    return any(h.handle is not None for h in _shared_holds)


@contextmanager
def host_work() -> Iterator[None]:
    """Let go of this process's shared holds while it does host-only work, then take them back (issue #31).

    Why: a Triton compile inside a candidate's first call takes 0.5-3 s of CPU and no GPU, and a timing that
    waits for the device would wait for it. The caller makes sure none of its GPU work is still queued."""
    let_go = [h for h in _shared_holds if h.handle is not None]
    for hold in let_go:
        hold.let_go()
    try:
        yield
    finally:
        for hold in let_go:
            _host_work_wait[0] += hold.take()


def host_work_wait() -> float:
    """Seconds this process waited to take its shared holds back after host-only work."""
    return _host_work_wait[0]
