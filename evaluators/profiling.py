"""What a forward launches and where its device time goes: the torch profiler, and Nsight Compute when
``ncu`` is installed. Feeds the bottleneck analysis the operator reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

NCU_METRICS = ("gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
               "sm__throughput.avg.pct_of_peak_sustained_elapsed",
               "launch__registers_per_thread", "sm__warps_active.avg.pct_of_peak_sustained_active")


def kernel_breakdown(fn: Callable[[], object], calls: int = 5) -> dict[str, Any]:
    """Per-kernel device time (us per forward) and kernel launches per forward, from the torch profiler."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for event in prof.events():
        if getattr(event, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        totals[event.name] += event.device_time if hasattr(event, "device_time") else event.cuda_time
        counts[event.name] += 1
    rows = ({"name": name[:120], "us_per_call": totals[name] / calls, "launches_per_call": counts[name] / calls}
            for name in totals)
    kernels = sorted(rows, key=lambda k: -k["us_per_call"])
    return {"kernels": kernels[:20], "launches_per_forward": sum(counts.values()) / calls}


def ncu_available() -> bool:
    return shutil.which("ncu") is not None


def ncu_metrics(spec_path: str, candidate_path: str, case: str, timeout_s: float = 300.0) -> dict[str, Any]:
    """Run one forward of ``case`` under Nsight Compute and return its metrics per kernel.

    Clocks are left alone (``--clock-control none``): we measure the card as we find it.
    """
    cmd = ["ncu", "--csv", "--clock-control", "none", "--nvtx", "--nvtx-include", "ke_candidate/",
           "--metrics", ",".join(NCU_METRICS),
           "--target-processes", "all", sys.executable, "-m", "evaluators.ncu_driver", spec_path, candidate_path, case]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"ncu failed: {exc}"}
    return {"kernels": parse_ncu_csv(proc.stdout), **({"error": proc.stderr[-500:]} if proc.returncode else {})}


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """ncu --csv prints one row per (kernel, metric); fold them into one dict per kernel launch."""
    import csv

    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        return []
    rows = list(csv.DictReader(lines))
    kernels: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = row.get("ID", "")
        entry = kernels.setdefault(key, {"kernel": row.get("Kernel Name", "")[:120]})
        value = row.get("Metric Value", "").replace(",", "")
        try:
            entry[row.get("Metric Name", "?")] = float(value)
        except ValueError:
            entry[row.get("Metric Name", "?")] = value
    return list(kernels.values())


if __name__ == "__main__":  # pragma: no cover - manual use
    print(json.dumps(ncu_metrics(*sys.argv[1:4]), indent=2))
