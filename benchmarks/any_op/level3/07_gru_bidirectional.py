"""Bidirectional single-layer GRU over a sequence; returns every step's output."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 512
input_size = 256
hidden_size = 256


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, batch_first=True, bidirectional=True)

    def forward(self, x):
        return self.gru(x)[0]


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
