"""NVIDIA drafts lower depthwise convs (one input channel per group) to a direct stencil, not tl.dot.

The implicit GEMM of conv.py pads a depthwise group's 1 x COG product to 16-wide tiles; on NVIDIA targets
conv_depthwise.py sums the taps directly instead. Each draft is checked by the real evaluator on Triton's
CPU interpreter; the cpu target keeps the implicit GEMM (its committed results stay valid).
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec
from kernelevolve.operators.tunables import find_tunables, rewrite

DW_SPEC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.b = nn.Conv2d(8, 16, 3, stride=2, padding=2, dilation=2, groups=8, bias=False)
        self.c = nn.Conv1d(6, 6, 5, padding=2, groups=6)
        self.d = nn.Conv3d(4, 4, 3, padding=1, groups=4)
        self.e = nn.Conv2d(5, 5, (3, 2), groups=5)
        self.f = nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x2, x1, x3, xt):
        return (torch.relu(self.a(x2)), self.b(x2), F.relu6(self.c(x1)), self.d(x3), self.e(xt.transpose(2, 3)),
                x2 + self.f(x2))


def get_inputs():
    return [torch.randn(2, 8, 11, 9), torch.randn(3, 6, 20), torch.randn(2, 4, 5, 4, 6), torch.randn(2, 5, 9, 7)]


def get_test_inputs():
    return [get_inputs(), [torch.randn(3, 8, 6, 13), torch.randn(2, 6, 7), torch.randn(3, 4, 3, 6, 2),
                           torch.randn(3, 5, 4, 3)]]


def get_init_inputs():
    return []
'''

BF16_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(8, 16, 3, padding=1, groups=8).to(torch.bfloat16)

    def forward(self, x):
        return torch.clamp(self.dw(x), 0.0, 6.0)


def get_inputs():
    return [torch.randn(2, 8, 10, 12, dtype=torch.bfloat16)]


def get_test_inputs():
    return [get_inputs()]


def get_init_inputs():
    return []
'''


def _spec(tmp_path: Path, text: str, name: str) -> Path:
    spec = tmp_path / f"spec_{name}.py"
    spec.write_text(text, encoding="utf-8")
    return spec


def test_nvidia_depthwise_convs_get_the_direct_stencil(tmp_path: Path) -> None:
    """All six convs (ReLU and ReLU6 epilogues, a channel multiplier without bias, 1d, 3d, a transposed
    input, a residual reading the conv's own input) take the stencil; the cpu draft keeps the GEMM."""
    spec = _spec(tmp_path, DW_SPEC, "dw")
    source = lower_spec(spec, "h100", symbolic=True)
    assert len(re.findall(r"def _dwconv\d+\(", source)) == 6 and "tl.dot" not in source
    assert "def _conv" not in source and source.count("+ fused") == 3  # relu, relu6 (hardtanh), residual add
    assert "depthwise conv2d stride=[2, 2] padding=[2, 2] dilation=[2, 2] groups=8" in source
    assert "HAS_BIAS=False" in source and "tl.static_range(K2)" in source
    names = {t.name: t.kind for t in find_tunables(source)}
    assert names["DWCONV0_BLOCK_S"] == "block" and names["DWCONV0_ROWS"] == "count"
    assert names["DWCONV0_WARPS"] == "warps"
    cpu = lower_spec(spec, "cpu")
    assert "_dwconv" not in cpu and "tl.dot" in cpu


def test_nvidia_depthwise_draft_is_exact(ke, tmp_path: Path) -> None:
    """Half the kernels keep their default tiles (one program covers them); the others get 1- or 4-row
    tiles of 16 or 32 positions, so the flattened program index, partial tiles and their masks are exercised."""
    spec = _spec(tmp_path, DW_SPEC, "dw")
    source = lower_spec(spec, "h100", symbolic=True)
    tiles = {"DWCONV0_ROWS": 4, "DWCONV0_BLOCK_S": 32, "DWCONV2_ROWS": 1, "DWCONV2_BLOCK_S": 16,
             "DWCONV4_ROWS": 4, "DWCONV4_BLOCK_S": 16}
    small = {t: tiles[t.name] for t in find_tunables(source) if t.name in tiles}
    assert len(small) == len(tiles)
    passes(ke, spec, rewrite(source, small), tmp_path, "dw")


def test_nvidia_depthwise_bf16_accumulates_in_fp32(ke, tmp_path: Path) -> None:
    spec = _spec(tmp_path, BF16_SPEC, "dw_bf16")
    source = lower_spec(spec, "h100", symbolic=True)
    assert "def _dwconv0(" in source and "+ fused" in source and "tl.dot" not in source
    passes(ke, spec, source, tmp_path, "bf16")
