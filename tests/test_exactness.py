"""The judge's second opinion for fp32 (evaluators/exactness.py): a long fp32 reduction summed in another
order than ATen's misses the fixed 1e-4 tolerance although it is as exact as the reference; it now passes,
while a kernel computing in TF32 precision, or with a real error, still fails."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evaluators.correctness import FRESH_SEED_OFFSET, compare, judge, make_inputs
from evaluators.spec import load_spec

SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(8, 131072), torch.randn(131072, 8)]


def get_init_inputs():
    return []
'''


def _tf32(t: torch.Tensor) -> torch.Tensor:
    """Inputs rounded to TF32's 10-bit mantissa, as a tensor core's TF32 mode reads them."""
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def _chunked(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """fp32 throughout, K summed in 64-wide chunks: another rounding order than the reference's."""
    acc = torch.zeros(a.shape[0], b.shape[1])
    for k in range(0, a.shape[1], 64):
        acc += a[:, k:k + 64] @ b[k:k + 64, :]
    return acc


KERNELS = {
    "chunked_fp32": (_chunked, "ok"),
    "tf32_inputs": (lambda a, b: (_tf32(a).double() @ _tf32(b).double()).float(), "incorrect"),
    "off_by_0.05": (lambda a, b: _chunked(a, b) + torch.eye(8)[0] * 0.05, "incorrect"),
}


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory):
    path: Path = tmp_path_factory.mktemp("exact") / "long_matmul.py"
    path.write_text(SPEC, encoding="utf-8")
    return load_spec(path)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_long_fp32_reductions_are_judged_against_the_reference_own_error(spec, kernel: str) -> None:
    compute, verdict = KERNELS[kernel]
    outputs = {}
    for seed in (0,):
        for offset, call in ((0, "1"), (FRESH_SEED_OFFSET, "2")):
            for name, case in make_inputs(spec, "prod", "cpu", seed + offset).items():
                outputs[f"{seed}/{name}/{call}"] = [compute(*case)]
    first = next(iter(make_inputs(spec, "prod", "cpu", 0).values()))
    strict_ok, _, why = compare(outputs[f"0/{next(iter(spec.cases('prod')))}/1"], [first[0] @ first[1]], spec)
    assert not strict_ok and "exceeds atol" in why  # every kernel here misses the fixed tolerance
    [case] = judge(spec, "prod", "cpu", [0], outputs)
    assert case.status == verdict, case.error
