"""Matrix-vector product of an (m, k) matrix with a (k, 1) column."""

import torch
import torch.nn as nn

m = 8192
k = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, v):
        return torch.matmul(a, v)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, 1)]


def get_init_inputs():
    return []
