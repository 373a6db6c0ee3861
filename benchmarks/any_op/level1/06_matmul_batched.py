"""Batched matrix product of (batch, m, k) and (batch, k, n) stacks."""

import torch
import torch.nn as nn

batch_size = 64
m = 512
k = 256
n = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []
