"""Layer normalisation over the hidden dim of (batch, seq, hidden) activations."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 1024
hidden = 2048


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
