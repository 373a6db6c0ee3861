"""ConvTranspose3d, mean over channels, tanh."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 64
depth = 16
height = 32
width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1)

    def forward(self, x):
        return torch.tanh(self.deconv(x).mean(dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
