"""Own spec: a residual MLP on a 3-d input (linear -> gelu -> linear + x), epilogues through reshapes."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d: int, h: int) -> None:
        super().__init__()
        self.up = nn.Linear(d, h)
        self.down = nn.Linear(h, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(x)))


def get_inputs():
    return [torch.randn(2, 8, 16)]


def get_test_inputs():
    return [[torch.randn(2, 8, 16)], [torch.randn(3, 5, 16)]]


def get_init_inputs():
    return [16, 32]
