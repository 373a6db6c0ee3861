"""Matrix product with the right operand stored transposed: A @ B^T (a linear layer's layout)."""

import torch
import torch.nn as nn

m = 4096
k = 4096
n = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b.t()


def get_inputs():
    return [torch.randn(m, k), torch.randn(n, k)]


def get_init_inputs():
    return []
