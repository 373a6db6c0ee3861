"""1x1 (pointwise) 2-D convolution: a channel-mixing GEMM per pixel."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 512
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
