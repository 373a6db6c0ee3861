"""One LSTM cell step written out: gates from x and h, new cell and hidden state."""

import torch
import torch.nn as nn

batch_size = 4096
input_size = 1024
hidden_size = 1024


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x, h, c):
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, dim=1)
        c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_next = torch.sigmoid(o) * torch.tanh(c_next)
        return h_next, c_next


def get_inputs():
    return [
        torch.randn(batch_size, input_size),
        torch.randn(batch_size, hidden_size),
        torch.randn(batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size]
