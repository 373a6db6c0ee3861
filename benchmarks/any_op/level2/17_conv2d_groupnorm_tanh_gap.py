"""Conv2d, GroupNorm, tanh, global average pooling to one value per channel."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 32
out_channels = 64
num_groups = 8
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return torch.tanh(self.norm(self.conv(x))).mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, num_groups]
