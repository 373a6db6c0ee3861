"""Own spec: linear + bias + relu, then a bmm of the result with itself transposed (tiny sizes)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(self.fc(x)) * 0.5
        g = h.view(2, -1, h.shape[-1])
        return h, torch.bmm(g, g.transpose(1, 2))


def get_inputs():
    return [torch.randn(64, 40)]


def get_test_inputs():
    return [[torch.randn(6, 40)], [torch.randn(34, 40)]]


def get_init_inputs():
    return [40, 24]
