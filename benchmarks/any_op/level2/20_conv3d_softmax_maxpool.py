"""Conv3d, softmax over channels, 2x2x2 max pooling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 8
out_channels = 32
depth = 16
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return F.max_pool3d(torch.softmax(self.conv(x), dim=1), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
