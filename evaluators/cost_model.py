"""Estimating a kernel's time on a target from interpreted counts (the simulator's second half).

Per launch, the time is the largest of three limits, plus the launch overhead:
- memory: DRAM bytes over the achievable bandwidth, where DRAM bytes charge each buffer's unique
  footprint once and re-reads only when the buffer does not fit in the last-level cache, and the
  achievable bandwidth is also capped by memory-level parallelism (Little's law: bytes in flight across
  the resident programs over the memory latency), which is what makes tiny blocks slow;
- compute: ``tl.dot`` FLOPs at the matrix rate of their dtype plus other arithmetic at the vector rate;
- latency: waves of resident programs, each waiting out its chain of dependent loads.
Occupancy (programs resident per unit) comes from warps per program and on-chip memory per program.
MTIA knobs (``cb_multiplier``, ``dual_core`` launch keywords) change bytes in flight and occupancy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evaluators.sim_counter import LaunchCounts

ACHIEVABLE_BW = 0.92  # fraction of rated DRAM bandwidth a streaming kernel reaches
ACHIEVABLE_MATRIX = 0.75
MAX_PROGRAMS_PER_UNIT = 32


@dataclass
class Hardware:
    name: str
    interpreter: str
    compute_units: int
    dram_gbps: float
    cache_bytes: float
    onchip_bytes_per_unit: float
    tflops: dict[str, float]
    launch_overhead_us: float
    mem_latency_ns: float
    max_warps_per_unit: int
    warp_size: int = 32
    registers_per_unit: int = 65536  # 32-bit registers per SM / CU
    max_registers_per_thread: int = 255

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Hardware:
        vendor_defaults = {"nvidia": (700.0, 64), "amd": (800.0, 32), "mtia-sim": (500.0, 1), "cpu": (100.0, 1)}
        latency, warps = vendor_defaults.get(d.get("interpreter", "nvidia"), (700.0, 64))
        cache_mib = max(float(d.get("l2_cache_mib", 0) or 0), float(d.get("last_level_cache_mib", 0) or 0))
        regs = {"nvidia": (65536, 255), "amd": (131072, 512)}.get(d.get("interpreter", "nvidia"), (0, 0))
        return cls(name=d["name"], interpreter=d.get("interpreter", "nvidia"),
                   warp_size=int(d.get("warp_size", 32) or 32),
                   registers_per_unit=int(d.get("registers_per_unit", regs[0])),
                   max_registers_per_thread=int(d.get("max_registers_per_thread", regs[1])),
                   compute_units=int(d.get("compute_units", 1)), dram_gbps=float(d["dram_bandwidth_gbps"]),
                   cache_bytes=cache_mib * (1 << 20),
                   onchip_bytes_per_unit=float(d.get("onchip_memory_per_unit_kib", 0) or 0) * 1024,
                   tflops=dict(d.get("peak_tflops", {})), launch_overhead_us=float(d.get("launch_overhead_us", 0)),
                   mem_latency_ns=float(d.get("mem_latency_ns", latency)),
                   max_warps_per_unit=int(d.get("max_warps_per_unit", warps)))


def dram_bytes(launch: LaunchCounts, cache_bytes: float, concurrent: int | None = None) -> tuple[float, float]:
    """(read, written) DRAM bytes.

    Each buffer's footprint is read once. Re-reads come in two kinds: inside one program (short reuse
    distance: they hit while the resident programs' footprints fit in the cache) and across programs
    (long distance: they hit only as far as the whole buffer fits in the cache).
    """
    read = 0.0
    per_program = sum(launch.per_buffer("unique_load_bytes")) / max(launch.programs, 1)
    resident_set = per_program * (concurrent or launch.programs)
    near_miss = 0.0 if resident_set <= cache_bytes else 1.0 - cache_bytes / resident_set
    for requested, within, size in zip(launch.per_buffer("load_bytes"), launch.per_buffer("unique_load_bytes"),
                                       launch.buffer_bytes, strict=True):
        within = min(within, requested)
        unique = min(within, size)
        far_miss = 0.0 if size <= cache_bytes else 1.0 - cache_bytes / size
        read += unique + (within - unique) * far_miss + (requested - within) * near_miss
    written = sum(min(w, size) for w, size in zip(launch.per_buffer("store_bytes"), launch.buffer_bytes, strict=True))
    return read, written


def estimate_launch(launch: LaunchCounts, hw: Hardware) -> dict[str, float]:
    dual = hw.interpreter == "mtia-sim" and bool(launch.knobs.get("dual_core"))
    cb = float(launch.knobs.get("cb_multiplier", 1) or 1) if hw.interpreter == "mtia-sim" else 1.0
    units = hw.compute_units // 2 if dual else hw.compute_units
    warps = 1 if hw.max_warps_per_unit == 1 else launch.num_warps
    resident = max(1, min(hw.max_warps_per_unit // max(warps, 1), MAX_PROGRAMS_PER_UNIT))
    loads = max(launch.mean("load_ops"), 1.0)
    stages = max(1, launch.num_stages) if loads > 2 else min(loads, 2.0)
    per_program_onchip = launch.max_in_flight() * stages * cb
    if hw.onchip_bytes_per_unit and per_program_onchip:
        resident = max(1, min(resident, int(hw.onchip_bytes_per_unit // per_program_onchip)))
    # Registers: a program's largest live value (and a second of its size in flight) spreads over its
    # threads; past the per-thread limit it spills to local memory, and it caps residency per unit.
    threads = max(warps * hw.warp_size, 1)
    regs_per_thread = 2.0 * launch.max_elems() / threads + 32 if hw.registers_per_unit else 0.0
    spill = 1.0
    if hw.registers_per_unit and regs_per_thread:
        spill = max(1.0, regs_per_thread / hw.max_registers_per_thread)
        used = min(regs_per_thread, hw.max_registers_per_thread) * threads
        resident = max(1, min(resident, int(hw.registers_per_unit // used)))
    concurrent = units * resident
    active = min(launch.programs, concurrent)
    waves = math.ceil(launch.programs / concurrent) if launch.programs else 0

    read, written = dram_bytes(launch, hw.cache_bytes, concurrent)
    bw = hw.dram_gbps * 1e9 * ACHIEVABLE_BW
    per_program = launch.max_in_flight() * stages
    if hw.registers_per_unit:  # outstanding loads are bounded per thread (~8 x 16 B), not by block size
        per_program = min(per_program, threads * 16 * 8)
    in_flight = active * per_program * cb * (2 if dual else 1)
    mlp_bw = in_flight / (hw.mem_latency_ns * 1e-9) if in_flight else bw
    memory_s = (read + written) / max(min(bw, mlp_bw), 1.0)

    dtype = next((p.dot_dtype for p in launch.sampled if p.dot_dtype), "fp32")
    matrix_rate = (hw.tflops.get(dtype) or hw.tflops.get("fp32") or 1.0) * 1e12 * ACHIEVABLE_MATRIX
    vector_rate = (hw.tflops.get("fp32") or 1.0) * 1e12
    compute_s = (launch.total("dot_flops") / matrix_rate + launch.total("alu_flops") / vector_rate
                 + launch.total("int_ops") / (vector_rate / 2))  # integer issue at about half the fp32 rate
    latency_s = waves * loads * hw.mem_latency_ns * 1e-9 / stages  # software pipelining overlaps the chain
    body_s = max(memory_s, compute_s, latency_s) * spill
    limit = "memory" if body_s == memory_s else ("compute" if body_s == compute_s else "latency")
    return {"time_ms": (body_s + hw.launch_overhead_us * 1e-6) * 1e3, "memory_ms": memory_s * 1e3,
            "compute_ms": compute_s * 1e3, "latency_ms": latency_s * 1e3, "dram_read_bytes": read,
            "dram_write_bytes": written, "programs": launch.programs, "resident_per_unit": resident,
            "waves": waves, "limit": limit, "regs_per_thread": regs_per_thread, "spill_factor": spill}


def estimate(launches: list[LaunchCounts], hw: Hardware) -> dict[str, Any]:
    per = [estimate_launch(launch, hw) | {"kernel": launch.kernel} for launch in launches]
    return {"time_ms": sum(p["time_ms"] for p in per), "launches": per}


def eager_estimate(op_costs: list[tuple[str, float, float, str]], hw: Hardware) -> float:
    """PyTorch eager as the simulated baseline: each ATen op one launch that streams its tensors, its matrix
    FLOPs priced at the rate of its dtype. ``op_costs``: (name, bytes, flops, dtype) per op."""
    bw = hw.dram_gbps * 1e9 * ACHIEVABLE_BW
    total = 0.0
    for _, nbytes, flops, dtype in op_costs:
        rate = (hw.tflops.get(dtype) or hw.tflops.get("fp32") or 1.0) * 1e12 * ACHIEVABLE_MATRIX
        total += max(nbytes / bw, flops / rate) + hw.launch_overhead_us * 1e-6
    return total * 1e3
