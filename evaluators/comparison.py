"""Comparing a candidate's outputs with the reference's: fixed tolerances, NaN agreement, a mean-error bound,
all in float64 a chunk at a time.

Why chunks: at KernelBench's published sizes an output is several GB, and a float64 copy of it (or of the
difference) doubled the judge's memory (issue #28). Every whole-output comparison of the evaluator (this,
the precision floor, the float64 second opinion) walks :func:`chunks` instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch

from evaluators.spec import OperatorSpec

TOLERANCE_MISS = "exceeds atol"  # compare's wording for an output outside the fixed tolerance
COMPARE_CHUNK = 1 << 23  # elements at a time: float64 temporaries of 64 MiB each


def chunks(*tensors: torch.Tensor, size: int = COMPARE_CHUNK) -> Iterator[list[torch.Tensor]]:
    """Same-range flat slices of same-sized tensors (a non-contiguous one is copied once, whole)."""
    flats = [t.reshape(-1) for t in tensors]
    for start in range(0, flats[0].numel(), size):
        yield [f[start:start + size] for f in flats]


def compare(
    got: list[torch.Tensor] | None, expected: list[torch.Tensor], spec: OperatorSpec
) -> tuple[bool, float, str]:
    if got is None:
        return False, float("inf"), "no output recorded"
    if len(got) != len(expected):
        return False, float("inf"), f"returned {len(got)} outputs, reference returns {len(expected)}"
    worst = 0.0
    for i, (g, e) in enumerate(zip(got, expected, strict=False)):
        if g.device != e.device:  # a CPU-built reference judging device outputs, or the reverse
            g = g.to(e.device)
        if g.shape != e.shape:
            return False, float("inf"), f"output #{i} has shape {tuple(g.shape)}, expected {tuple(e.shape)}"
        if g.dtype != e.dtype:
            return False, float("inf"), f"output #{i} has dtype {g.dtype}, expected {e.dtype}"
        if not e.numel():
            continue
        if not (g.is_floating_point() or g.is_complex()):
            if not torch.equal(g, e):
                mismatches = int((g != e).sum())
                return False, float("inf"), f"output #{i}: {mismatches} integer elements differ"
            continue
        atol, rtol = spec.tolerance(e.dtype)
        stats = _float_stats(g, e, atol, rtol)
        if not stats.nan_match:
            return False, float("inf"), f"output #{i}: NaN where the reference has none (unwritten or invalid)"
        err = stats.max_err
        worst = max(worst, err)
        if not stats.close:
            return False, worst, f"output #{i}: max abs error {err:.3g} {TOLERANCE_MISS}={atol:g}, rtol={rtol:g}"
        bound = spec.mean_abs_err.get(e.dtype)
        mean = stats.sum_err / stats.count if stats.count else 0.0
        if bound is not None and stats.count and mean > bound:
            return False, worst, (f"output #{i}: mean abs error {mean:.3g} exceeds the spec's "
                                  f"MEAN_ABS_ERR {bound:g} (each element within atol={atol:g}, rtol={rtol:g})")
    return True, worst, ""


@dataclass
class _Stats:
    nan_match: bool = True
    close: bool = True
    max_err: float = 0.0
    sum_err: float = 0.0
    count: int = 0


def _float_stats(g: torch.Tensor, e: torch.Tensor, atol: float, rtol: float) -> _Stats:
    """NaN agreement, closeness and the absolute errors of one floating output, in float64, a chunk at a time
    (so the judge's memory is bounded by the chunk, not by the output: issue #28)."""
    stats, maxima = _Stats(), []
    for g_part, e_part in chunks(g, e):
        g64, e64 = g_part.double(), e_part.double()
        nan = e64.isnan()
        if not torch.equal(g64.isnan(), nan):
            stats.nan_match = False
            return stats
        diff = (g64[~nan] - e64[~nan]).abs()
        if diff.numel():
            maxima.append(diff.max())
            stats.sum_err += float(diff.sum())
            stats.count += diff.numel()
        stats.close = stats.close and torch.allclose(g64, e64, atol=atol, rtol=rtol, equal_nan=True)
    stats.max_err = float(torch.stack(maxima).max()) if maxima else 0.0
    return stats
