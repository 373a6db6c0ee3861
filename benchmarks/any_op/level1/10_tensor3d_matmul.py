"""A 3-D tensor times a matrix: (batch, m, k) @ (k, n), the matrix shared by every batch."""

import torch
import torch.nn as nn

batch_size = 16
m = 1024
k = 1024
n = 1536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
