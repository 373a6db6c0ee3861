"""Matrix product with the left operand stored transposed: A^T @ B."""

import torch
import torch.nn as nn

m = 4096
k = 2048
n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a.t() @ b


def get_inputs():
    return [torch.randn(k, m), torch.randn(k, n)]


def get_init_inputs():
    return []
