"""Matrix product with a long reduction: small (m, n) output, k of 131072."""

import torch
import torch.nn as nn

m = 256
k = 131072
n = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
