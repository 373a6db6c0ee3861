"""Padded tap loads keep every lane's address inside the input (indexing.padded_load).

Triton 3.6 on Hopper miscompiled the depthwise template's masked tap load: masked-off lanes past the
input's end still leaked into the sum, so the result depended on the allocation that followed the input
(benchmarks/results/padded_load_h200.md). The stencil templates (depthwise, direct conv, pooling) now point
masked lanes back at the tensor's base under a ``*_GUARD`` flag: the guarded form costs up to 2.2x on an H200, so
the first draft keeps plain loads and the offline operator's second draft sets every flag. The interpreter
cannot show the miscompile; what is checked here is the two forms' text, the two drafts, and that both stay
exact.
The implicit-GEMM conv templates keep plain masked loads (no miscompile was seen there); the evaluator's
guard bands (evaluators/guard_band.py) would fail a draft of theirs that leaked.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.lowering_checks import SPECS, passes

from kernelevolve.lowering import lower_spec, lower_spec_text
from kernelevolve.operators.offline import lowered_samples
from kernelevolve.operators.tunables import find_tunables, rewrite

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
    return [get_inputs(), get_inputs()]  # the drafts are traced at these sizes (lowered_samples)


def get_init_inputs():
    return []
'''

# the unguarded forms these templates had: the depthwise tap, the direct conv's chained pointer, the pool window
_RAW_TAP_LOAD = re.compile(r"tl\.load\((xp \+|xq\d,|x_ptr \+ base)")
GUARDS = {"DWCONV0_GUARD", "CONV0_GUARD", "POOL0_GUARD", "POOL1_GUARD", "ADAPTIVE_POOL0_GUARD", "ADAPTIVE_POOL1_GUARD"}


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "stencils.py"
    spec.write_text(STENCIL_SPEC, encoding="utf-8")
    return spec


def test_every_stencil_tap_load_has_a_guarded_form_behind_a_flag(tmp_path: Path) -> None:
    source = lower_spec(_spec(tmp_path), "h100", symbolic=True)
    assert "def _dwconv" in source and "def _pool" in source and "for ci in range(0, CIG)" in source
    assert "tl.load(tl.where(xm, xp + (k0) * sx0 + (k1) * sx1, xp) if GUARD else xp + " in source  # depthwise
    assert "xq1 = xq0 + i1 * sx1" in source and "tl.load(tl.where(ok1, xq1, xpc) if GUARD else xq1," in source
    assert source.count("tl.load(tl.where(valid, x_ptr + ") == 4  # two pools, two adaptive pools
    assert not _RAW_TAP_LOAD.search(source), _RAW_TAP_LOAD.search(source)
    flags = {t.name: (t.kind, t.value) for t in find_tunables(source) if t.name.endswith("_GUARD")}
    assert flags == {name: ("flag", 0) for name in GUARDS}  # off in the first draft: the fast loads
    assert source.count("GUARD: tl.constexpr") == len(GUARDS) and source.count("GUARD=") == len(GUARDS)


def test_the_offline_operator_drafts_the_guarded_form_second(tmp_path: Path) -> None:
    first, second = lowered_samples("stencils", STENCIL_SPEC, "h100")
    assert first.source == lower_spec_text("stencils", STENCIL_SPEC, "h100")
    guards = {t.name: t.value for t in find_tunables(second.source) if t.name.endswith("_GUARD")}
    assert guards == dict.fromkeys(GUARDS, 1)
    assert rewrite(second.source, {t: 0 for t in find_tunables(second.source) if t.name in GUARDS}) == first.source
    assert len(lowered_samples("softmax", (SPECS / "softmax_dim.py").read_text(), "h100")) == 1  # nothing to guard


def test_guarded_and_plain_stencils_are_exact(ke, tmp_path: Path) -> None:
    """Both settings of the flags in the NVIDIA draft, and the interpreter's own draft, through the evaluator."""
    spec = _spec(tmp_path)
    for sample in lowered_samples("stencils", STENCIL_SPEC, "h100"):
        passes(ke, spec, sample.source, tmp_path, sample.path.stem)
    passes(ke, spec, lower_spec(spec, "cpu"), tmp_path, "cpu", gpu_form=False)
