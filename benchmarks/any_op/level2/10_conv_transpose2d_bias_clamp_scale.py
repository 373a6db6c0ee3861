"""ConvTranspose2d, a learned bias, clamp to [0, 1], then scale by 2."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 64
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return torch.clamp(self.deconv(x) + self.bias, 0.0, 1.0) * 2.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
