"""NVIDIA drafts: fp32 dots as three TF32 products, and rows that fit one tile read once.

Both are GPU-only choices of the lowering (lowering/dots.py, rows.py); the interpreter's own drafts keep
IEEE dots and the three-pass rows. Each NVIDIA draft is still checked here by the real evaluator on Triton's
CPU interpreter, in both settings of the switch, so the branch the search may flip to is exact too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.lowering_checks import SPECS, passes

from evaluators.roofline import Peaks, analyse, fp32_accurate_rate
from kernelevolve.lowering import lower_spec
from kernelevolve.operators.tunables import find_tunables, neighbours


def test_nvidia_drafts_run_fp32_dots_as_tf32x3_and_the_search_can_flip_it() -> None:
    gpu, cpu = lower_spec(SPECS / "linear_relu.py", "h100", symbolic=True), lower_spec(SPECS / "linear_relu.py", "cpu")
    assert 'input_precision="tf32x3"' in gpu and "MATMUL0_TF32X3 = 1" in gpu and "GROUP_M=" in gpu
    assert "tf32x3" not in cpu and "GROUP_M" not in cpu
    assert "tf32x3" not in lower_spec(SPECS / "linear_relu.py", "mi300x")  # other vendors keep IEEE dots
    flag = next(t for t in find_tunables(gpu) if t.name == "MATMUL0_TF32X3")
    assert flag.kind == "flag" and neighbours(flag) == [0]
    conv = lower_spec(SPECS / "conv2d_relu_bias.py", "h100", symbolic=True)
    assert "CONV0_TF32X3 = 1" in conv and "TF32X3=CONV0_TF32X3" in conv


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["linear_relu", "conv2d_relu_bias"])
def test_nvidia_matmul_and_conv_drafts_are_exact_with_either_dot(spec: str, ke, tmp_path: Path) -> None:
    """The grouped tile order and the larger tiles keep every output element covered once; the interpreter
    runs tf32x3 exactly, so this checks the kernel's indexing in both branches of the switch."""
    source = lower_spec(SPECS / f"{spec}.py", "h100", symbolic=True)
    passes(ke, SPECS / f"{spec}.py", source, tmp_path, "x3")
    passes(ke, SPECS / f"{spec}.py", source.replace("_TF32X3 = 1", "_TF32X3 = 0"), tmp_path, "ieee")


CONV_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c2 = nn.Conv2d(32, 24, 3, stride=2, padding=2, dilation=2, groups=2)
        self.c1 = nn.Conv1d(16, 16, 5, padding=2, bias=False)
        self.p = nn.Conv2d(32, 16, 1)
        self.c3 = nn.Conv3d(16, 4, 2)

    def forward(self, x2, x1, x3):
        return torch.relu(self.c2(x2)) + 1, torch.relu(x1 + self.c1(x1)), self.c3(x3.transpose(1, 2)), self.p(x2)


def get_inputs():
    return [torch.randn(2, 32, 11, 9), torch.randn(3, 16, 20), torch.randn(1, 5, 16, 4, 6)]


def get_test_inputs():
    return [get_inputs()]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
def test_nvidia_convs_have_a_channels_last_form_exact_either_way(ke, tmp_path: Path) -> None:
    """Grouped, strided, dilated, padded 2-d, bias-free 1-d and a 3-d conv on a non-contiguous input: the
    NVIDIA draft's channels-last kernels (inputs copied channels-last; one loop over (tap, channel step), or
    taps outer) and its NCHW kernels all pass the evaluator (the 1-d conv's epilogue reads the conv's own
    input, which must stay NCHW); groups of 16 or more input channels default to channels-last, but not a
    1x1 conv."""
    spec = tmp_path / "convs.py"
    spec.write_text(CONV_SPEC, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)
    assert source.count("if CONV") == 8 and "CONV0_CHANNELS_LAST = 1" in source and "def _convcl0(" in source
    assert all(f"CONV{i}_DIRECT = 0" in source for i in range(4))  # 16+ channels a group: the tensor-core forms
    assert "CONV1_CHANNELS_LAST = 1" in source and "CONV3_CHANNELS_LAST = 0" in source
    assert "_convcl" not in lower_spec(spec, "cpu")
    flag = next(t for t in find_tunables(source) if t.name == "CONV0_CHANNELS_LAST")
    assert flag.kind == "flag"
    passes(ke, spec, source, tmp_path, "channels_last")
    assert "CONV0_FLAT_TAPS = 1" in source
    passes(ke, spec, source.replace("_FLAT_TAPS = 1", "_FLAT_TAPS = 0"), tmp_path, "taps_outer")
    nchw = source
    for i in range(4):
        nchw = nchw.replace(f"CONV{i}_CHANNELS_LAST = 1", f"CONV{i}_CHANNELS_LAST = 0")
    assert "_CHANNELS_LAST = 1" not in nchw
    passes(ke, spec, nchw, tmp_path, "nchw")


ROWS_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return torch.softmax(x * 3, dim=-1), torch.log_softmax(x, dim=0), self.norm(x) * 2 + 1


def get_inputs():
    return [torch.randn(96, 200)]


def get_test_inputs():
    return [get_inputs(), [torch.randn(40, 200) * 4 - 1]]


def get_init_inputs():
    return [200]
'''


@pytest.mark.slow
def test_nvidia_rows_that_fit_one_tile_are_read_once(ke, tmp_path: Path) -> None:
    """Softmax, log_softmax and layer norm rows of 200 fit one 256-wide tile: the NVIDIA draft's ONE_TILE
    branch reads each row once. Exact on the interpreter in that branch and, with BLOCK_R tuned below the
    row, in the three-pass branch; the cpu target's draft has no ONE_TILE at all."""
    spec = tmp_path / "rows.py"
    spec.write_text(ROWS_SPEC, encoding="utf-8")
    source = lower_spec(spec, "h100", symbolic=True)
    assert source.count("if ONE_TILE:") == 3 and "SOFTMAX0_BLOCK_R = 256" in source
    assert "ONE_TILE" not in lower_spec(spec, "cpu")
    # four rows a program, as the search may tune it: a quarter of the interpreter's programs, same branches
    for kernel in ("SOFTMAX0", "LOG_SOFTMAX0", "LAYER_NORM0"):
        assert f"\n{kernel}_BLOCK_O = 1 " in source
        source = source.replace(f"\n{kernel}_BLOCK_O = 1 ", f"\n{kernel}_BLOCK_O = 4 ")
    passes(ke, spec, source, tmp_path, "one_tile")
    looped = source
    for kernel in ("SOFTMAX0", "LOG_SOFTMAX0", "LAYER_NORM0"):
        looped = looped.replace(f"{kernel}_BLOCK_R = 256", f"{kernel}_BLOCK_R = 64")
    assert looped.count("_BLOCK_R = 64") >= 2
    passes(ke, spec, looped, tmp_path, "looped")


def test_the_fp32_compute_floor_counts_tensor_cores_at_a_third_of_tf32() -> None:
    """An IEEE-accurate fp32 matmul can run as three TF32 products, so the floor of an fp32 case uses the
    faster of fp32 and TF32 / 3; without a TF32 rate it stays the fp32 peak."""
    assert fp32_accurate_rate({"fp32": 67, "tf32": 494.7}) == pytest.approx(164.9)
    assert fp32_accurate_rate({"fp32": 163.4, "tf32": 300}) == 163.4
    assert fp32_accurate_rate({"fp32": 5.5}) == 5.5
    peaks = Peaks(dram_gbps=3350, tflops={"fp32": 67, "tf32": 494.7, "bf16": 989.4})
    fp32 = analyse(2 * 4096 ** 3, 3 * 4096 ** 2 * 4, "fp32", 1.0, peaks)
    assert fp32["compute_floor_ms"] == pytest.approx(2 * 4096 ** 3 / 164.9e12 * 1e3)
    bf16 = analyse(2 * 4096 ** 3, 3 * 4096 ** 2 * 2, "bf16", 1.0, peaks)
    assert bf16["compute_floor_ms"] == pytest.approx(2 * 4096 ** 3 / 989.4e12 * 1e3)
