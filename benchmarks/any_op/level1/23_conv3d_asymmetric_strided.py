"""3-D convolution with a 3x5x5 kernel and stride (1, 2, 2) over a non-cubic volume."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 8
out_channels = 32
depth = 16
height = 96
width = 128
kernel_size = (3, 5, 5)
stride = (1, 2, 2)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
