"""A second opinion for fp32 outputs that miss the fixed tolerance: is the candidate as exact as the reference?

Why: two correct fp32 implementations of a long reduction disagree by more than 1e-4. A 256x131072 @
131072x256 matmul summed in another order than cuBLAS's differs from it by ~2e-2 on elements near zero,
although both are within fp32 rounding of the true result. The fixed (atol, rtol) then rejects every correct
kernel of a large-K matmul, matvec or long sum, however exact.

So when an fp32 output misses the tolerance, the judge re-runs the reference in float64 on the same inputs
(the "exact" result) and measures the reference's own worst error against it. The candidate passes if each
of its elements is within the fixed tolerance of the exact result plus ``SLACK`` times that worst error:
it is as accurate as the reference, up to a different rounding order. A kernel with a real bug, or one that
computes in lower precision than the reference (TF32 for an fp32 matmul: ~1e-3 relative), stays far outside.
A reference that cannot run in float64 gets no second opinion.
"""

from __future__ import annotations

from typing import Any

import torch

from evaluators.comparison import chunks
from evaluators.spec import OperatorSpec

SLACK = 2.0  # candidate error allowed, in units of the reference's own worst error against float64


def as_float64(value: Any) -> Any:
    """A case with every floating tensor in float64 (other arguments as they are)."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.double()
    if isinstance(value, (list, tuple)):
        return type(value)(as_float64(v) for v in value)
    return value


def as_exact_as_reference(got: list[torch.Tensor], expected: list[torch.Tensor], exact: list[torch.Tensor],
                          spec: OperatorSpec) -> bool:
    """Every fp32 output within tolerance + SLACK x the reference's worst error of the float64 result, every
    other output equal to the reference's within the fixed tolerance (the caller's first verdict)."""
    if len(exact) != len(expected):
        return False
    for g, e, x in zip(got, expected, exact, strict=True):
        g = g.to(e.device)
        atol, rtol = spec.tolerance(e.dtype)
        if e.dtype != torch.float32 or x.shape != e.shape or not x.is_floating_point():
            if not all(torch.allclose(gc.double(), ec.double(), atol=atol, rtol=rtol, equal_nan=True)
                       for gc, ec in chunks(g, e)):
                return False
            continue
        if g.shape != e.shape:
            return False
        x = x.to(e.device)
        own = 0.0  # the reference's own worst error against float64 (a first pass: the bound needs it whole)
        for gc, ec, xc in chunks(g, e, x):
            e64, x64 = ec.double(), xc.double()
            if not torch.equal(gc.isnan(), ec.isnan()):
                return False
            inf = ec.isinf()
            if not torch.equal(gc[inf], ec[inf]):
                return False
            both = torch.isfinite(e64) & torch.isfinite(x64)
            if both.any():
                own = max(own, float((e64[both] - x64[both]).abs().max()))
        for gc, ec, xc in chunks(g, e, x):
            g64, e64, x64 = gc.double(), ec.double(), xc.double()
            both = torch.isfinite(e64) & torch.isfinite(x64)
            if not torch.allclose(g64[both], x64[both], atol=atol + SLACK * own, rtol=rtol):
                return False
            rest = torch.isfinite(e64) & ~both  # finite in fp32, not in float64: the fixed tolerance decides
            if not torch.allclose(g64[rest], e64[rest], atol=atol, rtol=rtol):
                return False
    return True
