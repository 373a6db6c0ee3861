"""Physics holds (issue #31): a kernel cannot be measured faster than its case's floor.

The floor is ``max(bytes / DRAM bandwidth, FLOPs / peak rate, launch overhead)`` (roofline.py). Its
compute term counts the FLOPs of the *reference's* algorithm (a spec's ``FLOPS``, or torch's FLOP counter
on the reference). A kernel may honestly do less arithmetic: re-associating ``X·(XᵀY)`` as ``(X·Xᵀ)·Y``,
or summing before a matmul instead of after. Its bytes term counts every input read once and every output
written once, which nothing that computes the outputs can avoid. So a case measured above 1.0 of its floor
is one of two things:

* ``fewer_flops``: faster than the compute term, not faster than the bytes and launch terms. Physics
  holds; the FLOP count was not a lower bound. The case's floor is re-based on the bytes and launch terms
  (its fraction is then at most 1) and the fitness stands; the flag and the raw fraction stay on the case.
* ``faster_than_bytes``: faster than moving its own inputs and outputs once. Either ``BYTES`` overstates
  what must move, or the timing misses work (an asynchronous launch it did not wait for, a reused
  result). Nothing here can tell which, so the fitness is withheld (0) until a person explains it, and
  the case stays flagged in every table.
"""

from __future__ import annotations

from typing import Any

PHYSICS_LIMIT = 1.0  # fraction of the floor no measurement may exceed


def floor_verdict(roof: dict[str, Any], measured_ms: float | None) -> tuple[dict[str, Any], str]:
    """(the roofline as it should be reported, flag): flag is "", "fewer_flops" or "faster_than_bytes"."""
    fraction = roof.get("fraction_of_floor")
    if not measured_ms or fraction is None or fraction <= PHYSICS_LIMIT:
        return roof, ""
    bytes_floor = max(roof.get("memory_floor_ms") or 0.0, roof.get("launch_floor_ms") or 0.0)
    if bytes_floor and bytes_floor / measured_ms > PHYSICS_LIMIT:
        return {**roof, "raw_fraction_of_floor": fraction}, "faster_than_bytes"
    rebased = {**roof, "floor_ms": bytes_floor or None, "raw_fraction_of_floor": fraction,
               "fraction_of_floor": bytes_floor / measured_ms if bytes_floor else None}
    if bytes_floor:
        memory_bound = (roof.get("memory_floor_ms") or 0.0) >= (roof.get("launch_floor_ms") or 0.0)
        rebased["bottleneck"] = "memory" if memory_bound else "latency"
    return rebased, "fewer_flops"


def withheld_reason(case: str, roof: dict[str, Any], measured_ms: float) -> str:
    """The one line a ``faster_than_bytes`` case puts on its evaluation."""
    bytes_floor = max(roof.get("memory_floor_ms") or 0.0, roof.get("launch_floor_ms") or 0.0)
    return (f"case {case} measured {measured_ms:.4g} ms, under the {bytes_floor:.4g} ms its inputs and outputs "
            f"take to move once ({bytes_floor / measured_ms:.2f} of its floor): the spec's BYTES overstates the "
            "traffic or the timing misses work; fitness withheld until that is explained")
