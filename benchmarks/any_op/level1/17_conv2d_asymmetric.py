"""2-D convolution with a 3x7 kernel on wide, non-square images."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
out_channels = 64
height = 96
width = 320
kernel_size = (3, 7)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
