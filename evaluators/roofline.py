"""The physical floor of a case and how close a measured time gets to it (docs/architecture.md §6).

floor = max(bytes / DRAM bandwidth, FLOPs / peak rate for the dtype, launch overhead). The larger of the
first two names the bottleneck, unless the measured time is so short that launch latency dominates.

A spec states its work with FLOPS/BYTES. One that does not (a user's file, a KernelBench-format problem) gets
``default_work``: every input, parameter and buffer read once and every output written once, and the matmul,
conv and attention FLOPs torch's FlopCounterMode counts in one reference forward. Intermediates are left out,
so it is a lower bound on the work; without it the floor was the launch overhead alone (4 us).
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


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def default_work(reference: torch.nn.Module, inputs: tuple) -> tuple[float | None, float]:
    """(FLOPs or None, bytes) of one forward of ``reference`` on ``inputs``, for a spec without FLOPS/BYTES."""
    from torch.utils.flop_counter import FlopCounterMode

    state = [*reference.parameters(), *reference.buffers()]
    counter = FlopCounterMode(display=False)
    try:
        with torch.no_grad(), counter:
            outputs = reference(*inputs)
        flops = counter.get_total_flops()
    except Exception:  # noqa: BLE001 - an op the counter cannot follow: the floor keeps the bytes it knows
        outputs, flops = (), 0
    nbytes = sum(t.numel() * t.element_size() for t in [*_tensors(inputs), *state, *_tensors(outputs)])
    return (float(flops) if flops else None), float(nbytes)


def fp32_accurate_rate(tflops: dict[str, float]) -> float | None:
    """The fastest IEEE-accurate fp32 matmul rate: CUDA-core fp32, or a third of TF32 (three TF32 tensor-core
    products per fp32 product, Triton's "tf32x3", are as exact as fp32), whichever is higher."""
    rates = [tflops.get("fp32") or 0.0, (tflops.get("tf32") or 0.0) / 3]
    return max(rates) or None


def analyse(flops: float | None, nbytes: float | None, dtype: str, measured_ms: float | None,
            peaks: Peaks) -> dict[str, Any]:
    memory_ms = nbytes / (peaks.dram_gbps * 1e9) * 1e3 if nbytes else 0.0
    rate = fp32_accurate_rate(peaks.tflops) if dtype == "fp32" else peaks.tflops.get(dtype) or peaks.tflops.get("fp32")
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
        "memory_floor_ms": memory_ms or None, "compute_floor_ms": compute_ms or None,
        "launch_floor_ms": launch_ms or None, "floor_ms": floor_ms,
        "fraction_of_floor": floor_ms / measured_ms if floor_ms and measured_ms else None,
        "bottleneck": bottleneck,
    }
