"""Transposed convs on NVIDIA targets: the stride-phase kernel (lowering/conv_transposed.py).

Each phase ``o mod stride`` of the output is a stride-1 gather conv over only the taps that land on it, so
the kernel does none of the masked-out tensor-core work of conv.py's transposed gather. The NVIDIA drafts
are checked by the real evaluator on Triton's CPU interpreter with the channels-last copies on and off;
the cpu target's drafts keep conv.py's kernel, and a dilated transposed conv keeps it on every target.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec
from kernelevolve.operators.tunables import find_tunables

BENCH = Path(__file__).parent.parent / "benchmarks" / "any_op"

SPEC_2D = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 5, 4, stride=2, padding=1)
        self.grouped = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.sparse = nn.ConvTranspose2d(4, 3, 2, stride=3)
        self.same = nn.ConvTranspose2d(4, 3, 3, padding=1, bias=False)
        self.mixed = nn.ConvTranspose2d(4, 3, (3, 4), stride=(2, 1), padding=(1, 2))
        self.dilated = nn.ConvTranspose2d(4, 3, 3, stride=2, dilation=2)

    def forward(self, x, x8):
        return (torch.relu(self.up(x)), self.grouped(x8), self.sparse(x), self.same(x),
                self.mixed(x.transpose(2, 3)), self.dilated(x))


def get_inputs():
    return [torch.randn(2, 4, 5, 6), torch.randn(3, 8, 4, 5)]  # sizes 1 would be pinned by the trace


def get_test_inputs():
    return [get_inputs(), [torch.randn(1, 4, 3, 7), torch.randn(2, 8, 3, 3)]]


def get_init_inputs():
    return []
'''

SPEC_1D_3D = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.ConvTranspose1d(4, 6, 5, stride=3, padding=1, output_padding=2)
        self.c3 = nn.ConvTranspose3d(4, 3, 3, stride=2, padding=1)

    def forward(self, x1, x3):
        return self.c1(x1) * 2.0 + 1.0, self.c3(x3)


def get_inputs():
    return [torch.randn(2, 4, 7), torch.randn(2, 4, 3, 4, 3)]


def get_test_inputs():
    return [get_inputs(), [torch.randn(1, 4, 4), torch.randn(1, 4, 2, 3, 4)]]


def get_init_inputs():
    return []
'''


def _kernels(source: str) -> list[str]:
    """The comment line under each kernel's def: what the kernel computes."""
    lines = source.splitlines()
    return [lines[i + 1 + next(j for j, t in enumerate(lines[i + 1:]) if t.strip().startswith("#"))].strip()
            for i, line in enumerate(lines) if line.startswith("def _conv")]


def _both_layouts(ke, spec: Path, source: str, tmp_path: Path) -> None:
    """The draft passes with the channels-last copies (its default where groups have >= 16 channels) and
    reading the tensors in place: the kernel reads everything through strides."""
    on, off = source, source
    for t in find_tunables(source):
        if t.name.endswith("_CHANNELS_LAST"):
            assert t.kind == "flag"
            on = on.replace(f"{t.name} = {t.value}", f"{t.name} = 1")
            off = off.replace(f"{t.name} = {t.value}", f"{t.name} = 0")
    assert "_CHANNELS_LAST = 0" not in on and "_CHANNELS_LAST = 1" not in off
    passes(ke, spec, on, tmp_path, "channels_last")
    passes(ke, spec, off, tmp_path, "in_place")


@pytest.mark.slow
def test_transposed_2d_convs_run_by_stride_phase_on_nvidia(ke, tmp_path: Path) -> None:
    """Bias + ReLU epilogue, groups with output padding, a kernel smaller than its stride (outputs no tap
    reaches are the bias), stride 1 (one phase), per-dim strides on a non-contiguous input; the dilated
    conv falls back to conv.py's masked gather."""
    spec = tmp_path / "convt2d.py"
    spec.write_text(SPEC_2D, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)  # one production case: kept general for the test cases
    kernels = _kernels(source)
    assert len(kernels) == 6 and source.count("def _convt") == 5 and "def _conv0(" in source
    assert "stride=[2, 2] padding=[1, 1] groups=1, 4 stride phases + fused relu" in kernels[0]
    assert "groups=2, 4 stride phases" in kernels[1] and "9 stride phases" in kernels[2]
    assert "1 stride phases" in kernels[3] and "stride=[2, 1] padding=[1, 2] groups=1, 2 stride phases" in kernels[4]
    assert "dilation=[2, 2]" in kernels[5] and "% 2 == 0" in source  # the old kernel, masked taps
    assert "_k_major(" in source and "CONVT0_TF32X3 = 1" in source
    cpu = lower_spec(spec, "cpu")
    assert "_convt" not in cpu and "stride phases" not in cpu and cpu.count("def _conv") == 6
    _both_layouts(ke, spec, source, tmp_path)


@pytest.mark.slow
def test_transposed_1d_and_3d_convs_run_by_stride_phase_on_nvidia(ke, tmp_path: Path) -> None:
    """Stride 3 with output padding (1-d, with a fused scale-and-shift) and stride 2 in 3-d (8 phases)."""
    spec = tmp_path / "convt13d.py"
    spec.write_text(SPEC_1D_3D, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)
    kernels = _kernels(source)
    assert "conv1d stride=[3] padding=[1] groups=1, 3 stride phases + fused add, mul" in kernels[0]
    assert "conv3d stride=[2, 2, 2] padding=[1, 1, 1] groups=1, 8 stride phases" in kernels[1]
    assert "_convt" not in lower_spec(spec, "cpu")
    _both_layouts(ke, spec, source, tmp_path)


@pytest.mark.parametrize("name", ["level1/24_conv_transpose1d", "level1/25_conv_transpose2d",
                                  "level1/27_conv_transpose3d", "level2/10_conv_transpose2d_bias_clamp_scale"])
def test_benchmark_transposed_convs_take_the_phase_form_on_nvidia_only(name: str) -> None:
    gpu = lower_spec(BENCH / f"{name}.py", "h200", symbolic=True)
    assert "def _convt0(" in gpu and "stride phases" in gpu
    assert "_convt" not in lower_spec(BENCH / f"{name}.py", "cpu")


def test_a_dilated_transposed_conv_keeps_the_masked_gather() -> None:
    gpu = lower_spec(BENCH / "level1/26_conv_transpose2d_grouped_dilated.py", "h200", symbolic=True)
    assert "_convt" not in gpu and "def _conv0(" in gpu
