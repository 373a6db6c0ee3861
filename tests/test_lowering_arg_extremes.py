"""argmax/argmin and max/min with indices, lowered: NaN is the extreme and its first index wins, ties go to the
first index, as in ATen, in the CPU form and in the NVIDIA form (per-lane bests combined once per row)."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest
import torch

from kernelevolve.lowering import lower_spec

os.environ.setdefault("TRITON_INTERPRET", "1")

SPEC = """import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x):
        values, where = torch.max(x, dim=1)
        low, low_at = torch.min(x, dim=1)
        return torch.argmax(x, dim=1), torch.argmin(x, dim=1), values, where, low, low_at


def get_inputs(device='cpu'):
    return {'a': (torch.randn(6, 1500, device=device),)}


def get_test_inputs(device='cpu'):
    return get_inputs(device)
"""


def _rows() -> torch.Tensor:
    x = torch.randn(6, 1500)
    x[1, 700] = x[1, 1300] = 9.0  # a tie for the max: the first index
    x[1, 3] = x[1, 1400] = -9.0  # and for the min
    x[2, 1100] = float("nan")  # NaN is both extremes
    x[3, 40] = x[3, 900] = float("nan")  # the first NaN
    x[4] = 2.5  # all equal: index 0
    x[5] = float("-inf")
    return x


@pytest.mark.parametrize("target", ["cpu", "h100"])
def test_arg_extremes_match_aten_on_nan_and_ties(tmp_path: Path, target: str) -> None:
    spec = tmp_path / "arg_extremes.py"
    spec.write_text(SPEC, encoding="utf-8")
    module = types.ModuleType("arg_extremes_draft")
    exec(compile(lower_spec(spec, target), "arg_extremes_draft", "exec"), module.__dict__)  # noqa: S102
    x = _rows()
    got = module.TritonModel()(x)
    want = [torch.argmax(x, 1), torch.argmin(x, 1), *torch.max(x, 1), *torch.min(x, 1)]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert torch.equal(g, w) or torch.allclose(g, w, equal_nan=True), (g, w)
