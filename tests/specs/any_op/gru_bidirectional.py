import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bidirectional=True)

    def forward(self, x, h0):
        out, hn = self.gru(x, h0)
        return out, hn


def get_inputs():
    return [torch.rand(6, 3, 10), torch.rand(4, 3, 18)]


def get_init_inputs():
    return [10, 18, 2]
