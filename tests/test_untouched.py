"""Simulation at published sizes leaves big float tensors as untouched pages (evaluators/untouched.py): a
KernelBench case's random fill and its model's weight init cost seconds and gigabytes of host memory that
a sampled interpretation never reads."""

from __future__ import annotations

import torch

from evaluators.untouched import LARGE_BYTES, untouched_large


def _resident_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096


def test_big_floats_stay_unwritten_and_everything_else_is_built() -> None:
    big = 4 * LARGE_BYTES // 4  # elements of a float32 tensor of 4x the threshold
    before = _resident_bytes()
    with untouched_large():
        x = torch.rand(big)
        layer = torch.nn.Linear(1 << 12, 1 << 14)  # a 256 MiB weight, kaiming-initialised through nn.init
        like = torch.randn_like(x)
        x.copy_(like)
        small = torch.rand(1000)
        index = torch.randint(0, 7, (big // 8,))
        half = torch.rand(1000, 1000, dtype=torch.float16)
    grown = _resident_bytes() - before
    assert x.shape == (big,) and like.dtype == torch.float32 and layer.weight.requires_grad
    assert grown < index.numel() * 8 + 3 * LARGE_BYTES // 4, grown  # the int tensor, not the floats' 1.5 GiB
    assert int(index.max()) == 6 and float(small.std()) > 0.2 and float(half.float().std()) > 0.2
    assert float(x[:: 1 << 16].abs().sum()) == 0.0 and float(layer.weight.detach()[::512, ::512].abs().sum()) == 0.0
    after = torch.rand(big // 16)  # outside the block, nothing changes
    assert float(after.std()) > 0.2
