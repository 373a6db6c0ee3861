"""A matrix times a scalar given as a constructor argument."""

import torch
import torch.nn as nn

m = 16384
n = 4096
scale = 3.5


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a):
        return a * self.scale


def get_inputs():
    return [torch.randn(m, n)]


def get_init_inputs():
    return [scale]
