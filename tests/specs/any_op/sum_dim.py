"""Own spec: sums, means, amax and argmax over different dims, keepdim or not (tiny sizes, two shapes)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor):
        return (x.sum(dim=1), x.mean(dim=(0, 2), keepdim=True), x.amax(dim=-1), x.argmax(dim=1),
                x.var(dim=2), x.sum())


def get_inputs():
    return [torch.randn(8, 200, 33)]


def get_test_inputs():
    return [[torch.randn(2, 130, 5)], [torch.randn(3, 6, 140)]]


def get_init_inputs():
    return []
