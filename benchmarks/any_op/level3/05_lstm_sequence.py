"""Two-layer LSTM over a sequence; returns the last layer's final hidden state through a linear head."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 256
input_size = 256
hidden_size = 512
num_layers = 2
output_size = 128


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1, :])


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
