"""Transposed 1-D convolution that doubles the length (kernel 4, stride 2, padding 1)."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 64
length = 4096


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]
