"""Copies above rank 6 (the strided-copy kernel takes six dims): a rank-7 permute and an einsum over seven
indices, whose broadcast intermediates are rank 7, are folded (size-1 dims dropped, neighbours laid out alike
merged) or copied slice by slice, and the draft passes the real evaluator; the helper alone is exact for
permuted, flipped and broadcast operands up to rank 8."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec, runtime

SPEC = Path(__file__).parent / "specs" / "any_op" / "high_rank_copies.py"


def test_the_cpu_draft_is_exact(ke, tmp_path: Path) -> None:
    source = lower_spec(SPEC, "cpu")
    assert "_contiguous(view" in source  # a rank-7 view reaches the copy
    passes(ke, SPEC, source, tmp_path, "cpu_draft", gpu_form=False)


@pytest.mark.parametrize(("perm", "flip"), [
    ((0, 1, 2, 3, 4, 5, 6, 7), ()),  # drops the size-1 dim, then merges everything
    ((7, 1, 2, 0, 4, 3, 6, 5), (1, 5)),  # nothing to merge: one copy per index of dim 0
    ((2, 0, 1, 3, 4, 5, 6, 7), (0, 6)),  # a flipped first dim, sliced in reverse
])
def test_the_copy_helper_above_rank_6(monkeypatch: pytest.MonkeyPatch, perm: tuple[int, ...],
                                      flip: tuple[int, ...]) -> None:
    monkeypatch.setitem(os.environ, "TRITON_INTERPRET", "1")
    import triton
    import triton.language as tl

    scope = {"torch": torch, "triton": triton, "tl": tl, "COPY_BLOCK": 64}
    for name in runtime.helpers_used("_copy_into("):
        exec(runtime.HELPERS[name], scope)
    src = torch.randn(2, 3, 1, 2, 3, 2, 2, 3).permute(*perm)
    dst = torch.empty(src.shape)
    scope["_copy_into"](dst, src, flip)
    assert torch.equal(dst, src.flip(flip) if flip else src)
    wide = torch.randn(2, 1, 3, 1, 4, 1, 5).expand(2, 2, 3, 2, 4, 2, 5)  # stride-0 dims into a permuted buffer
    out = torch.empty(5, 2, 2, 3, 2, 4, 2).permute(1, 2, 3, 4, 5, 6, 0)
    scope["_copy_into"](out, wide)
    assert torch.equal(out, wide)
