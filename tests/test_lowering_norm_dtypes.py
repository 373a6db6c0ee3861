"""Half-precision norms, lowered: statistics as the target's device returns them, values normalised in fp32.

ATen's layer norm returns float32 mean/rstd for a bf16 input on a GPU and bf16 ones on the CPU; the trace runs on
the CPU either way, so the draft follows the target (``decompositions.device_semantics``). Group norm is
normalised in float32; ATen's CUDA kernel stores its statistics in the input's dtype and normalises with those
stored values (an H100 sweep failed a float32-statistics draft by 0.0625), its CPU kernel with float32 ones, so
the GPU draft rounds the statistics first and the CPU draft does not.
"""

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
    def forward(self, x, w, b):
        out, mean, rstd = torch.ops.aten.native_layer_norm.default(x, [x.shape[-1]], w, b, 1e-5)
        grouped, gmean, grstd = torch.ops.aten.native_group_norm.default(x.view(4, 8, 32), None, None, 4, 8, 32, 2,
                                                                          1e-5)
        return out, mean, rstd, grouped, gmean, grstd


def get_inputs(device='cpu'):
    x = (torch.randn(32, 32, device=device) * 4 + 20).to(torch.bfloat16)
    half = [torch.randn(32, device=device).to(torch.bfloat16) for _ in range(2)]
    return {'a': (x, *half)}


def get_test_inputs(device='cpu'):
    return get_inputs(device)
"""


def _draft(tmp_path: Path, target: str) -> types.ModuleType:
    spec = tmp_path / "half_norms.py"
    spec.write_text(SPEC, encoding="utf-8")
    module = types.ModuleType(f"half_norms_{target}")
    exec(compile(lower_spec(spec, target), module.__name__, "exec"), module.__dict__)  # noqa: S102
    return module


@pytest.mark.parametrize("target, stats", [("cpu", torch.bfloat16), ("h100", torch.float32)])
def test_half_norms_follow_the_target_device(tmp_path: Path, target: str, stats: torch.dtype) -> None:
    torch.manual_seed(0)
    x = (torch.randn(32, 32) * 4 + 20).to(torch.bfloat16)  # a mean far from 0: rounding the stats first shows
    w, b = torch.randn(32).to(torch.bfloat16), torch.randn(32).to(torch.bfloat16)
    out, mean, rstd, grouped, gmean, grstd = _draft(tmp_path, target).TritonModel()(x, w, b)
    assert (out.dtype, mean.dtype, rstd.dtype) == (torch.bfloat16, stats, stats)
    wide = x.float()
    assert torch.allclose(mean.float().flatten(), wide.mean(-1), rtol=1e-2)
    assert torch.allclose(out.float(), torch.nn.functional.layer_norm(wide, [32], w.float(), b.float()), atol=0.05)
    assert grouped.dtype == torch.bfloat16 and gmean.dtype == grstd.dtype == torch.bfloat16
    assert torch.allclose(gmean.float().flatten(), wide.view(4, 2, -1).mean(-1).flatten(), rtol=1e-2)


@pytest.mark.parametrize("target", ["cpu", "h100"])
def test_group_norm_normalizes_with_the_statistics_its_device_stores(tmp_path: Path, target: str) -> None:
    torch.manual_seed(1)
    x = (torch.randn(32, 32) + 100).to(torch.bfloat16)  # mean ~100: its bf16 rounding moves outputs by ~0.2
    w, b = torch.randn(32).to(torch.bfloat16), torch.randn(32).to(torch.bfloat16)
    grouped = _draft(tmp_path, target).TritonModel()(x, w, b)[3].float()
    rows = x.float().view(4, 2, -1)
    mean, var = rows.mean(-1, keepdim=True), rows.var(-1, correction=0, keepdim=True)
    rstd = torch.rsqrt(var + 1e-5)
    wide = ((rows - mean) * rstd).view(4, 8, 32).bfloat16().float()  # the CPU kernel's
    mean, rstd = mean.bfloat16().float(), rstd.bfloat16().float()
    stored = ((rows - mean) * rstd).view(4, 8, 32).bfloat16().float()  # the CUDA kernel's
    assert (wide - stored).abs().max() > 0.1  # the case tells the two apart
    want = stored if target == "h100" else wide
    assert (grouped - want).abs().max() <= 0.02
