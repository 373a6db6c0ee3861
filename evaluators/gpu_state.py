"""Clocks, temperature and power of the GPU a timing ran on, recorded next to every timing.

Why a shared, short-lived cache: ``nvidia-smi`` initialises NVML for every GPU of the host and serialises on
the driver, so one call costs 0.1-0.5 s alone and seconds when 16 evaluation slots call it at once (the
2-GPU throughput run of issue #15 spent ~2 s per node outside its phases). Every slot on a host therefore
shares one reading per GPU, refreshed by whichever slot first finds it older than ``STATE_TTL_S``; the others
keep using the last reading meanwhile. A recorded state is thus at most a few seconds old, which is what it
is for (spotting a throttled or hot GPU), and its age is recorded with it.

The query names the GPU by UUID: ``nvidia-smi`` ignores ``CUDA_VISIBLE_DEVICES``, so the process-local
index (0 in every pinned slot) named the host's first GPU, whichever GPU the slot timed on.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

STATE_TTL_S = 10.0
_FIELDS = "clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,driver_version"


def gpu_state() -> dict[str, str]:
    """Name, versions and the (shared, at most ``STATE_TTL_S`` old) nvidia-smi reading of the current GPU."""
    info = {"name": torch.cuda.get_device_name(), "torch": torch.__version__}
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:  # pragma: no cover
        pass
    gpu_id = _gpu_id()
    reading = _shared_reading(gpu_id, lambda: _query(gpu_id))
    if reading:
        info.update(reading)
    return info


def _gpu_id() -> str:
    """The id nvidia-smi knows this process's current GPU by (its UUID; the index where there is none)."""
    index = torch.cuda.current_device()
    uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", "") or "")
    if uuid:
        return uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"
    return str(index)


def _query(gpu_id: str) -> dict[str, str]:
    if not shutil.which("nvidia-smi"):
        return {}
    try:
        line = subprocess.run(["nvidia-smi", f"--query-gpu={_FIELDS}", "--format=csv,noheader", f"--id={gpu_id}"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    values = [v.strip() for v in line.split(",")]
    return dict(zip(_FIELDS.split(","), values, strict=False)) if len(values) == len(_FIELDS.split(",")) else {}


def _shared_reading(gpu_id: str, query: Callable[[], dict[str, str]], ttl_s: float = STATE_TTL_S
                    ) -> dict[str, str]:
    """The host-wide cached reading for ``gpu_id``; refreshed here only when stale and no one else is at it."""
    folder = Path(os.environ.get("KE_DEVICE_LOCK_DIR", tempfile.gettempdir()))
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in gpu_id)
    path = folder / f"ke-gpu-state-{safe}.json"
    cached = _read(path)
    if cached is not None and time.time() - cached["at"] < ttl_s:
        return _aged(cached)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"ke-gpu-state-{safe}.lock", "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another slot is refreshing it: its last reading will do
            if cached is not None:
                return _aged(cached)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # the very first reading: wait for it
            fresh = _read(path)
            if fresh is not None:
                return _aged(fresh)
        state = query()
        if state:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"at": time.time(), "state": state}), encoding="utf-8")
            tmp.replace(path)
        return {**state, "state_age_s": "0.0"} if state else {}


def _aged(entry: dict) -> dict[str, str]:
    """A cached reading, with how old it is."""
    return {**entry["state"], "state_age_s": f"{time.time() - entry['at']:.1f}"}


def _read(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("state"), dict) and "at" in data else None
