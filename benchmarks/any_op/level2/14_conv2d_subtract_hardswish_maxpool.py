"""Conv2d, minus a constant, hardswish, 2x2 max pooling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 32
out_channels = 64
height = 128
width = 128
shift = 0.25


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, shift):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.shift = shift

    def forward(self, x):
        return F.max_pool2d(F.hardswish(self.conv(x) - self.shift), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, shift]
