"""Left multiplication by a diagonal matrix given as a vector: diag(d) @ B."""

import torch
import torch.nn as nn

n = 8192
m = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, d, b):
        return torch.diag(d) @ b


def get_inputs():
    return [torch.randn(n), torch.randn(n, m)]


def get_init_inputs():
    return []
