"""Own spec: conv2d + relu + a per-channel bias, plus a grouped strided conv1d and a transposed conv2d."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.bias = nn.Parameter(torch.randn(c_out, 1, 1))
        self.grouped = nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)
        self.up = nn.ConvTranspose2d(c_in, 2, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor, s: torch.Tensor):
        return torch.relu(self.conv(x)) + self.bias, self.grouped(s), self.up(x)


def get_inputs():
    return [torch.randn(2, 3, 16, 16), torch.randn(2, 4, 40)]


def get_test_inputs():
    return [[torch.randn(1, 3, 5, 7), torch.randn(2, 4, 9)], [torch.randn(2, 3, 8, 6), torch.randn(1, 4, 17)]]


def get_init_inputs():
    return [3, 5]
