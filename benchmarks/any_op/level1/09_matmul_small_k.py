"""Outer-product-like matrix product: large output, reduction of only 32."""

import torch
import torch.nn as nn

m = 8192
k = 32
n = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
