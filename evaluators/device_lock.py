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
    """Whether checks, judges and compiles also take the device (shared), so no timing runs beside them
    (``KE_GPU_LOCK=phases``); by default (``timing``) only timings exclude each other (issue #31)."""
    return os.environ.get("KE_GPU_LOCK", "timing") == "phases"


@contextmanager
def _held(path: Path, mode: int) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle.fileno(), mode)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def _through_gate(device_index: int, mode: int) -> Iterator[float]:
    """Pass the gate, take the device lock in ``mode``, then leave the gate; yields the wait."""
    started = time.monotonic()
    with _held(gate_path(device_index), fcntl.LOCK_EX):
        data = _held(lock_path(device_index), mode)
        data.__enter__()
    try:
        yield time.monotonic() - started
    finally:
        data.__exit__(None, None, None)


@contextmanager
def exclusive_device(device_index: int) -> Iterator[float]:
    """Hold the device's timing lock; yields the seconds spent waiting for it.

    Writer priority: the timing takes the gate first and keeps it until it holds the device, so shared holders
    that arrive meanwhile queue behind it instead of starving it."""
    with _through_gate(device_index, fcntl.LOCK_EX) as waited:
        yield waited


@contextmanager
def shared_device(device_index: int | None) -> Iterator[float]:
    """Hold the device beside other checks, judges and compiles but never beside a timing; yields the wait.

    A no-op unless :func:`phases_locked`, or for ``None`` (the cpu target). Passing the gate (briefly) is what
    lets a waiting timing go first."""
    if device_index is None or not phases_locked():
        yield 0.0
        return
    with _through_gate(device_index, fcntl.LOCK_SH) as waited:
        yield waited
