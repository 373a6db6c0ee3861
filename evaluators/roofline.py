"""The physical floor of a case and how close a measured time gets to it (DESIGN §4).

floor = max(bytes / DRAM bandwidth, FLOPs / peak rate for the dtype, launch overhead). The larger of the
first two names the bottleneck, unless the measured time is so short that launch latency dominates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

DTYPE_KEYS = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
              torch.int8: "int8", torch.float8_e4m3fn: "fp8"}
LATENCY_BOUND_FACTOR = 3.0  # measured under 3x the launch overhead: launch latency is the limit


@dataclass
class Peaks:
    dram_gbps: float
    tflops: dict[str, float]
    launch_overhead_us: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Peaks | None:
        if not data or not data.get("dram_gbps"):
            return None
        return cls(float(data["dram_gbps"]), dict(data.get("tflops", {})), float(data.get("launch_overhead_us", 0)))


def compute_dtype(case: tuple) -> str:
    for arg in case:
        if isinstance(arg, torch.Tensor) and arg.is_floating_point():
            return DTYPE_KEYS.get(arg.dtype, "fp32")
    return "fp32"


def analyse(flops: float | None, nbytes: float | None, dtype: str, measured_ms: float | None,
            peaks: Peaks) -> dict[str, Any]:
    memory_ms = nbytes / (peaks.dram_gbps * 1e9) * 1e3 if nbytes else 0.0
    rate = peaks.tflops.get(dtype) or peaks.tflops.get("fp32")
    compute_ms = flops / (rate * 1e12) * 1e3 if flops and rate else 0.0
    launch_ms = peaks.launch_overhead_us * 1e-3
    floor_ms = max(memory_ms, compute_ms, launch_ms) or None
    if measured_ms and launch_ms and measured_ms < LATENCY_BOUND_FACTOR * launch_ms:
        bottleneck = "latency"
    elif memory_ms or compute_ms:
        bottleneck = "memory" if memory_ms >= compute_ms else "compute"
    else:
        bottleneck = None
    return {
        "memory_floor_ms": memory_ms or None, "compute_floor_ms": compute_ms or None, "floor_ms": floor_ms,
        "fraction_of_floor": floor_ms / measured_ms if floor_ms and measured_ms else None,
        "bottleneck": bottleneck,
    }
