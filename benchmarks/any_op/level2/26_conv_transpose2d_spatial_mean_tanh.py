"""ConvTranspose2d, mean over height and width, plus bias, tanh."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels))

    def forward(self, x):
        return torch.tanh(self.deconv(x).mean(dim=(2, 3)) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
