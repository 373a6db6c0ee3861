"""Row fusion on NVIDIA drafts: norms' reductions and the chain that reads them back in one kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec

NORMS_SPEC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w = nn.Parameter(torch.randn(hidden))

    def forward(self, x, img):
        rms = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        lo, hi = x.amin(1, keepdim=True), x.amax(1, keepdim=True)
        scaled = (x - lo) / (hi - lo)
        inst = F.instance_norm(img, eps=1e-5)
        channels = img / torch.sqrt(img.pow(2).mean(1, keepdim=True) + 1e-5)
        total = x.sum(-1, keepdim=True)
        l2 = x / x.pow(2).sum(1, keepdim=True).sqrt().clamp_min(1e-12).expand_as(x)
        return rms, scaled, inst, channels, x / total + total.mean(), l2


def get_inputs():
    return [torch.randn(24, 96), torch.randn(2, 6, 9, 7)]


def get_test_inputs():
    return [get_inputs(), [torch.randn(5, 96) * 3 + 1, torch.randn(1, 6, 4, 5)]]


def get_init_inputs():
    return [96]
'''


@pytest.mark.slow
def test_nvidia_norms_reduce_and_write_rows_in_one_kernel(ke, tmp_path: Path) -> None:
    """RMS norm (a prologue x**2 under the mean, a weight along the row), min-max scaling (two reductions),
    instance norm (mean and var over (H, W)), a norm over channels (strided rows) and an L2 row normalize
    (its reduced-shape chain read through an expand) each become one row
    kernel; a reduction also read outside its chain (``total.mean()``) keeps its own kernel; the draft is
    exact on the interpreter; the cpu draft has no row-fused kernel."""
    spec = tmp_path / "norms.py"
    spec.write_text(NORMS_SPEC, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)
    assert source.count("def _rowfuse") == 5, source
    assert "rc0 = " in source  # the L2 norm's clamp(sqrt(sum)), read through an expand, is computed per row
    assert "def _reduce" in source  # the shared sum of the last output
    assert "BLOCK_R=triton.next_power_of_2(" in source and "ROWFUSE0_BLOCK_R" not in source
    assert "_rowfuse" not in lower_spec(spec, "cpu")
    passes(ke, spec, source, tmp_path, "cand")


@pytest.mark.parametrize("target", ["h100"])
def test_rows_longer_than_one_tile_are_not_row_fused(target: str, tmp_path: Path) -> None:
    spec = tmp_path / "long.py"
    spec.write_text(NORMS_SPEC.replace("torch.randn(24, 96), torch.randn(2, 6, 9, 7)",
                                       "torch.randn(4, 20000), torch.randn(2, 6, 9, 7)").replace("[96]", "[20000]"),
                    encoding="utf-8")
    source = lower_spec(spec, target, symbolic=True)
    assert source.count("def _rowfuse") == 2  # the image norms still fuse; the 4 rows of 20000 do not


LONG_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, correction=0)
        lo, hi = x.amin(-1, keepdim=True), x.amax(-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + 1e-5), (x - lo) / (hi - lo)


def get_inputs():
    return [torch.randn(256, 40000)]


def get_test_inputs():
    return [[torch.randn(6, 300)], [torch.randn(3, 5000) * 2 + 1]]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
def test_nvidia_long_rows_fuse_into_a_looped_row_kernel(ke, tmp_path: Path) -> None:
    """Production rows of 40000 (over a one-tile row) but 256 of them: each program loops over its row to
    reduce (sum and extremes in one loop, the var's squared deviations in a second), then loops again to
    write; BLOCK_R is then a tunable. The draft is exact on the interpreter on rows of 300 and 5000."""
    spec = tmp_path / "long_rows.py"
    spec.write_text(LONG_SPEC, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)
    assert source.count("def _rowfuse") == 2 and "ROWFUSE0_BLOCK_R = 4096" in source
    assert source.count("for r0 in range(0, R, BLOCK_R)") == 5  # 3 for the norm, 2 for the min-max
    passes(ke, spec, source, tmp_path, "cand")


BACKWARD_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, grad, out, long_grad, long_out):
        g, h = grad * out, long_grad * long_out
        return g - out * g.sum(-1, keepdim=True), h - long_out * h.sum(-1, keepdim=True)


def get_inputs():
    return [torch.randn(24, 96), torch.rand(24, 96), torch.randn(256, 40000), torch.rand(256, 40000)]


def get_test_inputs():
    return [[torch.randn(6, 96), torch.rand(6, 96), torch.randn(3, 5000), torch.rand(3, 5000)]]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
def test_a_reduced_chain_read_again_is_computed_in_the_row_kernel(ke, tmp_path: Path) -> None:
    """A softmax backward's ``grad * out``, summed over the row and read again by the chain: the row kernel
    computes it at its loads (one tile, and looped over long rows) instead of a pointwise kernel writing it for
    the row kernel to read back; the draft is exact on the interpreter."""
    spec = tmp_path / "backward.py"
    spec.write_text(BACKWARD_SPEC, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)
    assert source.count("def _rowfuse") == 2 and "def _pointwise" not in source, source
    passes(ke, spec, source, tmp_path, "cand")
