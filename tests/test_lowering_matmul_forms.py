"""NVIDIA matmul forms (lowering/matmul_forms.py): split-K for a long K under a small output, GEMV for N == 1
or M == 1.

Each NVIDIA draft is checked by the real evaluator on Triton's CPU interpreter, split and unsplit (SPLIT_K set
to 1 in its source), with its fused epilogue; the cpu target's drafts keep the one-pass matmul kernel.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec
from kernelevolve.operators.tunables import find_tunables, neighbours

SPLIT_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(48))
        self.fc = nn.Linear(4096, 40)

    def forward(self, a, b, x, p, q):
        return torch.relu(a @ b + self.bias) * 2, self.fc(x), torch.bmm(p, q) - 1


def get_inputs():
    return [torch.randn(32, 4096), torch.randn(4096, 48), torch.randn(24, 4096), torch.randn(2, 16, 2048),
            torch.randn(2, 2048, 16)]


def get_test_inputs():
    return [get_inputs()]


def get_init_inputs():
    return []
'''

GEMV_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8192, 1)
        self.proj = nn.Linear(2048, 40)

    def forward(self, a, v, x, y, w):
        return torch.tanh(a @ v) + 0.5, self.head(x), torch.relu(self.proj(y)), y @ w


def get_inputs():
    return [torch.randn(64, 8192), torch.randn(8192, 1), torch.randn(24, 8192), torch.randn(1, 2048),
            torch.randn(2048, 72)]


def get_test_inputs():
    return [get_inputs()]


def get_init_inputs():
    return []
'''


def _spec(tmp_path: Path, name: str, text: str) -> Path:
    spec = tmp_path / f"{name}.py"
    spec.write_text(text, encoding="utf-8")
    return spec


def test_long_k_defaults_to_split_k_on_nvidia_only(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "splitk_spec", SPLIT_SPEC)
    source = lower_spec(spec, "h100", symbolic=True)
    assert "MATMUL0_SPLIT_K = 16" in source and "MATMUL1_SPLIT_K = 16" in source  # one 32 x 64 tile each
    assert "MATMUL2_SPLIT_K = 8" in source  # two batches of one tile, K = 2048: slices of 256
    assert source.count("def _splitk_sum") == 3 and "MATMUL0_BLOCK_N = 64" in source
    assert "tl.maximum(" in source.split("def _splitk_sum0(", 1)[1].split("def ", 1)[0]  # the epilogue moved
    knob = next(t for t in find_tunables(source) if t.name == "MATMUL0_SPLIT_K")
    assert knob.kind == "count" and neighbours(knob) == [8, 32]
    cpu = lower_spec(spec, "cpu")
    assert "SPLIT_K" not in cpu and "_splitk_sum" not in cpu


def test_short_k_keeps_one_pass() -> None:
    source = lower_spec(Path(__file__).parent / "specs" / "any_op" / "linear_relu.py", "h100", symbolic=True)
    assert "MATMUL0_SPLIT_K = 1 " in source


def test_benchmarks_pick_the_new_forms() -> None:
    bench = Path(__file__).parents[1] / "benchmarks" / "any_op" / "level1"
    large_k = lower_spec(bench / "08_matmul_large_k.py", "h200", symbolic=True)
    assert "MATMUL0_SPLIT_K = 64" in large_k and "MATMUL0_BLOCK_M = 128" in large_k
    matvec = lower_spec(bench / "07_matvec.py", "h200", symbolic=True)
    assert "def _gemv0(" in matvec and "tl.dot" not in matvec and "GEMV0_BLOCK_M = 16" in matvec
    assert "_gemv" not in lower_spec(bench / "07_matvec.py", "cpu")


def test_matrix_vector_products_lower_to_gemv_on_nvidia_only(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "gemv_spec", GEMV_SPEC)
    source = lower_spec(spec, "h100", symbolic=True)
    assert source.count("def _gemv") == 4 and "_matmul" not in source
    assert "GEMV0_BLOCK_M = 16" in source and "GEMV2_BLOCK_N = 16" in source  # K-contiguous rows
    assert "GEMV3_BLOCK_N = 64" in source  # w's columns are strided along K: wider blocks of them
    assert "tanh" in source.split("def _gemv0(", 1)[1].split("def ", 1)[0]
    assert "_gemv" not in lower_spec(spec, "cpu")


@pytest.mark.slow
def test_split_k_drafts_are_exact_split_or_not(ke, tmp_path: Path) -> None:
    """mm + bias + relu * 2 (the epilogue in the combine kernel), addmm (Linear) and bmm - 1 over K slices."""
    spec = _spec(tmp_path, "splitk_spec", SPLIT_SPEC)
    source = lower_spec(spec, "h100", symbolic=True)
    passes(ke, spec, source, tmp_path, "split")
    one = source
    for i in range(3):
        one = one.replace(f"MATMUL{i}_SPLIT_K = 16", f"MATMUL{i}_SPLIT_K = 1")
        one = one.replace(f"MATMUL{i}_SPLIT_K = 8", f"MATMUL{i}_SPLIT_K = 1")
    assert "SPLIT_K = 1 " in one and "SPLIT_K = 16" not in one and "SPLIT_K = 8 " not in one
    passes(ke, spec, one, tmp_path, "one_pass")


@pytest.mark.slow
def test_gemv_drafts_are_exact(ke, tmp_path: Path) -> None:
    spec = _spec(tmp_path, "gemv_spec", GEMV_SPEC)
    source = lower_spec(spec, "h100", symbolic=True)
    passes(ke, spec, source, tmp_path, "gemv")
    passes(ke, spec, source.replace("GEMV0_BLOCK_K = 256", "GEMV0_BLOCK_K = 64"), tmp_path, "gemv_bk64")


_LONG_K = '''
import os, sys, importlib.util
import torch
spec = importlib.util.spec_from_file_location("cand", sys.argv[1])
cand = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cand)
torch.manual_seed(0)
a, v = torch.randn(16, 131072), torch.randn(131072, 1)
exact = (a.double() @ v.double()).float()
ours = (cand.TritonModel()(a, v) - exact).abs().max().item()
aten = (a @ v - exact).abs().max().item()
print(ours, aten)
'''


@pytest.mark.slow
def test_gemv_sums_a_long_k_about_as_exactly_as_aten(tmp_path: Path) -> None:
    """K = 131072 against float64: the lanes' partial sums keep the GEMV's error near ATen's fp32 error."""
    spec = Path(__file__).parents[1] / "benchmarks" / "any_op" / "level1" / "07_matvec.py"
    candidate = tmp_path / "matvec.py"
    candidate.write_text(lower_spec(spec, "h200", symbolic=True), encoding="utf-8")
    script = tmp_path / "run.py"
    script.write_text(_LONG_K, encoding="utf-8")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(script), str(candidate)], capture_output=True, text=True, env=env,
                          timeout=300, check=True)
    ours, aten = map(float, done.stdout.split())
    assert ours <= max(2 * aten, 1e-4), (ours, aten)
