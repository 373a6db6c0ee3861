"""Conv2d, 2x2 max pooling, sigmoid, then a sum over channels and space per sample."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 32
out_channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(F.max_pool2d(self.conv(x), 2)).sum(dim=(1, 2, 3))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
