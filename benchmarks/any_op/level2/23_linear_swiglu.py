"""SwiGLU feed-forward: silu(x W_gate) * (x W_up), then a down projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
hidden = 2048
intermediate = 5632


class Model(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate = nn.Linear(hidden, intermediate, bias=False)
        self.up = nn.Linear(hidden, intermediate, bias=False)
        self.down = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden, intermediate]
