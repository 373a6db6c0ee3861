"""Transposed 2-D convolution with 4 groups, dilation 2 and an asymmetric 3x5 kernel."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 64
groups = 4
height = 48
width = 96
kernel_size = (3, 5)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, groups=groups, dilation=2)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
