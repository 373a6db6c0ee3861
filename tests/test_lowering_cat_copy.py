"""The strided copy and the cat kernel: ``_copy_dims`` folds layouts to the dims a copy must split (a
contiguous copy is one flat run), the copy helper is exact for permuted, flipped and broadcast operands of
every rank up to 6 and for dtype changes, and cat drafts (one kernel over the output picking each element's
source, or slice copies where a source cannot be read so) pass the real evaluator, GPU form and CPU form."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec, runtime

SPEC = Path(__file__).parent / "specs" / "any_op" / "joins.py"


def _scope() -> dict:
    scope: dict = {"torch": torch}
    exec(runtime.HELPERS["_copy_dims"], scope)
    return scope


def test_layouts_fold_to_the_dims_a_copy_must_split() -> None:
    dims = _scope()["_copy_dims"]
    x = torch.empty(4, 1, 6, 8)
    assert dims(torch.empty(4, 1, 6, 8), x, ()) == ([192], [1], [1], 0)  # contiguous: one flat run
    out = torch.empty(4, 6, 8, 2)[..., 0].unsqueeze(1)  # every other element of a stack's output
    assert dims(out, x, ()) == ([192], [1], [2], 0)
    t = torch.empty(8, 6).t()
    assert dims(torch.empty(6, 8), t, ()) == ([6, 8], [1, 6], [8, 1], 0)  # a transpose keeps both dims
    assert dims(torch.empty(4, 6), torch.empty(4, 6), (1,)) == ([4, 6], [6, -1], [6, 1], 5)  # read reversed


@pytest.mark.parametrize("rank", range(7))
def test_the_copy_helper_is_exact_at_every_rank(monkeypatch: pytest.MonkeyPatch, rank: int) -> None:
    monkeypatch.setitem(os.environ, "TRITON_INTERPRET", "1")
    import triton
    import triton.language as tl

    scope = {"torch": torch, "triton": triton, "tl": tl, "COPY_BLOCK": 32}
    for name in runtime.helpers_used("_copy_into("):
        exec(runtime.HELPERS[name], scope)
    gen = torch.Generator().manual_seed(rank)
    shape = [int(s) for s in torch.randint(1, 4, (rank,), generator=gen)]
    perm = [int(p) for p in torch.randperm(rank, generator=gen)]
    inverse = sorted(range(rank), key=perm.__getitem__)
    src = torch.randn(*[shape[p] for p in perm], generator=gen).permute(*inverse) if rank else torch.randn(())
    assert list(src.shape) == shape
    flip = tuple(d for d in range(rank) if d % 2 == 0)
    dst = torch.empty(shape[::-1]).permute(*reversed(range(rank))) if rank else torch.empty(())
    scope["_copy_into"](dst, src, flip)
    assert torch.equal(dst, src.flip(flip) if flip else src)
    if rank:  # a broadcast source, converted to float16 on the way
        wide = torch.randn(*[1 if d % 2 else s for d, s in enumerate(shape)], generator=gen).expand(*shape)
        half = torch.empty(shape, dtype=torch.float16)
        scope["_copy_into"](half, wide)
        assert torch.equal(half, wide.half())


def test_the_cat_drafts_are_exact(ke, tmp_path: Path) -> None:
    gpu = lower_spec(SPEC, "h100")
    assert gpu.count("_cat_into(_cat") == 5  # the ten-source join is copied source by source
    passes(ke, SPEC, gpu, tmp_path, "gpu_draft")
    passes(ke, SPEC, lower_spec(SPEC, "cpu"), tmp_path, "cpu_draft", gpu_form=False)
