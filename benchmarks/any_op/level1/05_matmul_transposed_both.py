"""Matrix product of two transposed operands: A^T @ B^T."""

import torch
import torch.nn as nn

m = 2048
k = 4096
n = 3072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a.t() @ b.t()


def get_inputs():
    return [torch.randn(k, m), torch.randn(n, k)]


def get_init_inputs():
    return []
