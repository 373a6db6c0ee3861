"""The precision floor: an fp32 output must carry about fp32's precision, whatever the tolerance admits.

Why: a spec's tolerance says how far an element may stray, not how precise the computation must be. Under
KernelBench's 1e-2, a kernel that computes an fp32 op in fp16, bf16 or TF32 passes every elementwise check
and is timed as a win over an fp32 baseline; and where the true output is smaller than the tolerance, a
kernel that writes zeros (or any constant) passes too. Both are reward hacks in the field's write-ups.

How: the relative L2 error of each fp32 output against the reference is measured first (in float64, a chunk at
a time: never a float64 copy of a whole output). Below ``FREE`` (about 80 fp32 ulps) nothing more is asked.
Above it, the reference is run in float64 (:mod:`evaluators.exactness`) and the candidate passes only if its
own error against that exact result is at most ``RATIO`` times the reference's own, plus ``FLOOR_ULPS`` fp32
ulps of the exact output's norm. A long reduction summed in another order stays well inside (the two errors
are of one size); fp16 arithmetic (~2^-11 relative, about 60x ``FREE``) does not, nor does a zero output where
the true one is small but not zero (relative error 1). A reference that cannot run in float64 gets no second
opinion.
"""

from __future__ import annotations

import math

import torch

from evaluators.comparison import chunks

FREE = 1e-5
RATIO = 32.0
FLOOR_ULPS = 8.0
_EPS32 = float(torch.finfo(torch.float32).eps)


def relative_error(got: torch.Tensor, expected: torch.Tensor) -> float:
    """||got - expected|| / ||expected|| over the elements where the expected value is finite."""
    got = got.to(expected.device)
    diff2 = scale2 = 0.0
    for g, e in chunks(got, expected):
        finite = torch.isfinite(e)
        e64 = e[finite].double()
        diff2 += float(((g[finite].double() - e64) ** 2).sum())
        scale2 += float((e64 ** 2).sum())
    if scale2 == 0.0:
        return 0.0 if diff2 == 0.0 else float("inf")
    return math.sqrt(diff2 / scale2)


def needs_exact(got: list[torch.Tensor], expected: list[torch.Tensor]) -> bool:
    """Whether any fp32 output strays far enough from the reference to ask the float64 result."""
    return any(e.dtype == torch.float32 and e.numel() and g.shape == e.shape and relative_error(g, e) > FREE
               for g, e in zip(got, expected, strict=False))


def precision_problem(got: list[torch.Tensor], expected: list[torch.Tensor], exact: list[torch.Tensor]) -> str | None:
    """Why an fp32 output is less precise than fp32 allows (None if every one is precise enough)."""
    for i, (g, e, x) in enumerate(zip(got, expected, exact, strict=False)):
        if e.dtype != torch.float32 or not e.numel() or x.shape != e.shape or relative_error(g, e) <= FREE:
            continue
        mine2 = own2 = scale2 = 0.0
        for gc, ec, xc in chunks(g.to(e.device), e, x.to(e.device)):
            finite = torch.isfinite(ec) & torch.isfinite(xc)
            x64 = xc[finite].double()
            mine2 += float(((gc[finite].double() - x64) ** 2).sum())
            own2 += float(((ec[finite].double() - x64) ** 2).sum())
            scale2 += float((x64 ** 2).sum())
        mine, own, scale = math.sqrt(mine2), math.sqrt(own2), math.sqrt(scale2)
        if mine <= RATIO * own + FLOOR_ULPS * _EPS32 * scale:
            continue
        rel = mine / scale if scale else float("inf")
        own_rel = own / scale if scale else 0.0
        return (f"output #{i}: relative error {rel:.2g} against the float64 result, where the fp32 reference's own "
                f"is {own_rel:.2g}: computed below fp32 precision, or an approximate answer inside a loose "
                f"tolerance")
    return None
