"""Conv3d, InstanceNorm3d, ReLU, times a learned per-channel scale."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 16
out_channels = 32
depth = 16
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.InstanceNorm3d(out_channels)
        self.scale = nn.Parameter(1 + 0.1 * torch.randn(out_channels, 1, 1, 1))

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
