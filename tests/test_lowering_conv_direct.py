"""NVIDIA drafts lower convs with few input channels per group to the direct fp32 FMA form (conv_direct.py).

Stems with 3 or 8 input channels ran at 0.13-0.5x of torch.compile through the implicit GEMM; the direct form
walks the taps with one outer product each. Each draft is checked by the real evaluator on Triton's CPU
interpreter in both settings of the ``*_DIRECT`` flag, so the branch the search may flip to is exact too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec
from kernelevolve.operators.tunables import find_tunables, neighbours

SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 24, 3, padding=1)
        self.b = nn.Conv3d(8, 20, (3, 2, 3), stride=(1, 2, 1), dilation=(2, 1, 1), bias=False)
        self.c = nn.Conv1d(6, 12, 5, padding=2, groups=2)
        self.d = nn.Conv2d(16, 8, 2, stride=2)

    def forward(self, x2, x3, x1):
        y = torch.relu(self.a(x2.transpose(2, 3))) * 2
        return y, self.b(x3), self.c(x1), self.d(torch.cat([y[:, :16], y[:, :16]], 0))


def get_inputs():
    return [torch.randn(2, 3, 9, 11), torch.randn(2, 8, 7, 6, 5), torch.randn(3, 6, 20)]


def get_test_inputs():
    return [get_inputs(), [torch.randn(1, 3, 13, 5), torch.randn(1, 8, 5, 4, 3), torch.randn(2, 6, 7)]]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
def test_few_channel_convs_default_to_the_direct_form_exact_either_way(ke, tmp_path: Path) -> None:
    """Padded 2-d on a transposed view with a fused epilogue, strided and dilated bias-free 3-d, grouped 1-d:
    DIRECT = 1 (fewer than 16 input channels per group); a 16-channel conv keeps the tensor-core forms."""
    spec = tmp_path / "convs.py"
    spec.write_text(SPEC, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)
    for i in range(3):
        assert f"CONV{i}_DIRECT = 1" in source and f"def _convfma{i}(" in source
    assert "CONV3_DIRECT = 0" in source
    assert "_convfma" not in lower_spec(spec, "cpu")
    flag = next(t for t in find_tunables(source) if t.name == "CONV0_DIRECT")
    assert flag.kind == "flag" and neighbours(flag) == [0]
    # every conv in both forms, in two evaluations: all direct (the 16-channel one flipped to it too), all GEMM
    direct = source.replace("CONV3_DIRECT = 0", "CONV3_DIRECT = 1")
    assert all(f"CONV{i}_DIRECT = 1" in direct for i in range(4))
    passes(ke, spec, direct, tmp_path, "direct")
    gemm = source.replace("_DIRECT = 1", "_DIRECT = 0")
    assert "_DIRECT = 1" not in gemm
    passes(ke, spec, gemm, tmp_path, "gemm")


STEMS = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 64, 7, stride=2, padding=3)
        self.b = nn.Conv2d(3, 96, 11, stride=4)
        self.c = nn.Conv3d(3, 16, 4)
        self.d = nn.Conv2d(3, 32, 3, stride=2, padding=1)

    def forward(self, x, y):
        return self.a(x), self.b(x), self.c(y), self.d(x)


def get_inputs():
    return [torch.randn(2, 3, 40, 40), torch.randn(2, 3, 8, 8, 8)]


def get_init_inputs():
    return []
'''


def test_wide_strided_stems_default_to_the_gemm_and_small_taps_stay_direct(tmp_path: Path) -> None:
    """Taps x stride above 64 (7x7/2: 98, 11x11/4: 484) default to the tensor-core forms, which GoogleNet's
    stem measured 36x faster; 4x4x4 at stride 1 (64) and 3x3/2 (18) keep the direct form."""
    spec = tmp_path / "stems.py"
    spec.write_text(STEMS, encoding="utf-8")
    flags = {t.name: t.value for t in find_tunables(lower_spec(spec, "h100", symbolic=True))
             if t.name.endswith("_DIRECT")}
    assert flags == {"CONV0_DIRECT": 0, "CONV1_DIRECT": 0, "CONV2_DIRECT": 1, "CONV3_DIRECT": 1}
