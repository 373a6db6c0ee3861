"""GELU (tanh approximation), elementwise."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
