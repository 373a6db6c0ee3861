"""Physics holds (issue #31): a kernel cannot be measured faster than its case's floor.

The floor is ``max(bytes / DRAM bandwidth, FLOPs / peak rate, launch overhead)`` (roofline.py). Its
compute term counts the FLOPs of the *reference's* algorithm (a spec's ``FLOPS``, or torch's FLOP counter
on the reference). A kernel may honestly do less arithmetic: re-associating ``X·(XᵀY)`` as ``(X·Xᵀ)·Y``,
or summing before a matmul instead of after. Its bytes term counts every input read once and every output
written once, which nothing that computes the outputs can avoid. So a case measured above 1.0 of its floor
is one of two things:

* ``fewer_flops``: faster than the compute term, not faster than the bytes term. Physics
  holds; the FLOP count was not a lower bound. The case's floor is re-based on the bytes and launch terms
  (its fraction is then at most 1) and the fitness stands; the flag and the raw fraction stay on the case.
* ``under_launch``: faster than the rated launch latency only. That term is the host's cost of a launch;
  a queued launch's GPU time can be shorter, so the floor keeps the bytes term and the fitness stands.
* ``faster_than_bytes``: faster than moving its own inputs and outputs once. Either ``BYTES`` overstates
  what must move, or the timing misses work (an asynchronous launch it did not wait for, a reused
  result). Nothing here can tell which, so the fitness is withheld (0) until a person explains it, and
  the case stays flagged in every table.
"""

from __future__ import annotations

from typing import Any

PHYSICS_LIMIT = 1.0  # fraction of the floor no measurement may exceed


def floor_verdict(roof: dict[str, Any], measured_ms: float | None) -> tuple[dict[str, Any], str]:
    """(the roofline as it should be reported, flag): flag is "", "fewer_flops", "under_launch" or
    "faster_than_bytes"."""
    fraction = roof.get("fraction_of_floor")
    if not measured_ms or fraction is None or fraction <= PHYSICS_LIMIT:
        return roof, ""
    memory = roof.get("memory_floor_ms") or 0.0
    if memory / measured_ms > PHYSICS_LIMIT:
        return {**roof, "raw_fraction_of_floor": fraction}, "faster_than_bytes"
    # The launch term is the host's rated launch latency; a queued launch's GPU time can be shorter, so it
    # is a floor only where the measurement reached it.
    launch = roof.get("launch_floor_ms") or 0.0
    floor = max(memory, launch if launch <= measured_ms else 0.0)
    flag = "fewer_flops" if (roof.get("compute_floor_ms") or 0.0) > measured_ms else "under_launch"
    rebased = {**roof, "floor_ms": floor or None, "raw_fraction_of_floor": fraction,
               "fraction_of_floor": floor / measured_ms if floor else None,
               "bottleneck": ("memory" if memory >= launch else "latency") if floor else roof.get("bottleneck")}
    return rebased, flag


def withheld_reason(case: str, roof: dict[str, Any], measured_ms: float) -> str:
    """The one line a ``faster_than_bytes`` case puts on its evaluation."""
    memory = roof.get("memory_floor_ms") or 0.0
    return (f"case {case} measured {measured_ms:.4g} ms, under the {memory:.4g} ms its inputs and outputs "
            f"take to move once ({memory / measured_ms:.2f} of its floor): the spec's BYTES overstates the "
            "traffic or the timing misses work; fitness withheld until that is explained")
