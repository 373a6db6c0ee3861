"""Transposed 3-D convolution, stride 2 with output padding 1 (kernel 3, padding 1)."""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 16
depth = 16
height = 32
width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
