"""Padded tap loads keep every lane's address inside the input (indexing.padded_load).

Triton 3.6 on Hopper miscompiled the depthwise template's masked tap load: masked-off lanes past the
input's end still leaked into the sum, so the result depended on the allocation that followed the input
(benchmarks/results/padded_load_h200.md). The stencil templates (depthwise, direct conv, pooling) now point
masked lanes back at the tensor's base. The interpreter cannot show the miscompile; what is checked here is
that every padded tap load in those templates takes the guarded form, and that the guarded forms stay exact.
The implicit-GEMM conv templates keep plain masked loads (no miscompile was seen there); the evaluator's
guard bands (evaluators/guard_band.py) would fail a draft of theirs that leaked.
"""

from __future__ import annotations

import re
from pathlib import Path

from kernelevolve.lowering import lower_spec
from tests.test_lowering_nvidia import _passes

STENCIL_SPEC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(6, 6, 3, padding=1, groups=6)
        self.few = nn.Conv2d(3, 8, 3, stride=2, padding=1)

    def forward(self, x, y, z):
        return (self.dw(x), self.few(x[:, :3]), F.max_pool1d(y, 3, stride=2, padding=1, dilation=2),
                F.avg_pool3d(z, 3, stride=2, padding=1), F.adaptive_avg_pool2d(x, (3, 2)),
                F.adaptive_max_pool1d(y, 4))


def get_inputs():
    return [torch.randn(2, 6, 9, 7), torch.randn(2, 5, 17), torch.randn(2, 3, 5, 6, 4)]


def get_test_inputs():
    return [get_inputs(), [torch.randn(3, 6, 9, 7), torch.randn(1, 5, 17), torch.randn(1, 3, 5, 6, 4)]]


def get_init_inputs():
    return []
'''

# the unguarded forms these templates had: the depthwise tap, the direct conv's chained pointer, the pool window
_RAW_TAP_LOAD = re.compile(r"tl\.load\((xp \+|xq\d|x_ptr \+ base)")


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "stencils.py"
    spec.write_text(STENCIL_SPEC, encoding="utf-8")
    return spec


def test_every_padded_tap_load_points_masked_lanes_back_at_the_base(tmp_path: Path) -> None:
    source = lower_spec(_spec(tmp_path), "h100", symbolic=True)
    assert "def _dwconv" in source and "def _pool" in source and "for ci in range(0, CIG)" in source
    assert "tl.load(tl.where(xm, xp + " in source  # depthwise taps
    assert "xq1 = xq0 + i1 * sx1" in source and "tl.load(tl.where(ok1, xpc + xq1, xpc)" in source  # direct conv
    assert source.count("tl.load(tl.where(valid, x_ptr + ") == 4  # two pools, two adaptive pools
    assert not _RAW_TAP_LOAD.search(source), _RAW_TAP_LOAD.search(source)


def test_guarded_stencils_are_exact(ke, tmp_path: Path) -> None:
    """Both draft forms through the real evaluator: the NVIDIA one (stencils) and the interpreter's own."""
    spec = _spec(tmp_path)
    _passes(ke, spec, lower_spec(spec, "h100", symbolic=True), tmp_path, "gpu")
    _passes(ke, spec, lower_spec(spec, "cpu"), tmp_path, "cpu", gpu_form=False)
