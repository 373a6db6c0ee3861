"""Grouped 2-D convolution: 8 groups, 3x3 kernel, padding 1."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 256
groups = 8
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, groups=groups)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
