"""Own spec: pointwise chains feeding reductions, softmax, layer norm, a scan and any (prologue fusion)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return (((a - b) ** 2).mean(), torch.softmax(a * 0.125 + b[0], dim=-1), (a * b).sum(dim=0),
                torch.layer_norm(a + b, (a.shape[-1],)), torch.cumsum(a.abs(), 1), (a > b).any(1),
                torch.sigmoid(a @ b.t()).amax(-1))


def get_inputs():
    return [torch.randn(6, 40), torch.randn(6, 40)]


def get_test_inputs():
    return [[torch.randn(6, 40), torch.randn(6, 40)], [torch.randn(3, 150), torch.randn(3, 150)]]


def get_init_inputs():
    return []
