import torch
import torch.nn as nn


class Model(nn.Module):
    """An LSTM whose forward draws its own initial state: a candidate must draw the same numbers."""

    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)

    def forward(self, x):
        h0 = torch.randn(self.num_layers, x.size(0), self.hidden_size, device=x.device)
        c0 = torch.rand(self.num_layers, x.size(0), self.hidden_size, device=x.device)
        out, _ = self.lstm(x, (h0, c0))
        return out[:, -1, :]


def get_inputs():
    return [torch.rand(4, 6, 5)]


def get_init_inputs():
    return [5, 12, 2]
