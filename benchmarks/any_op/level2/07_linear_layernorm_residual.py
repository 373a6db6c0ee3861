"""Residual branch x + LayerNorm(Linear(x))."""

import torch
import torch.nn as nn

batch_size = 8192
hidden = 2048


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return x + self.norm(self.fc(x))


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
