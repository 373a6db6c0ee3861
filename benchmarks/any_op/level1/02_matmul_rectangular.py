"""Rectangular matrix product of an (m, k) by a (k, n) matrix."""

import torch
import torch.nn as nn

m = 8192
k = 2048
n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
