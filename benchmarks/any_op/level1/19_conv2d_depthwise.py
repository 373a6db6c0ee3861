"""Depthwise 2-D convolution (one 3x3 filter per channel, groups = channels)."""

import torch
import torch.nn as nn

batch_size = 32
channels = 128
height = 112
width = 112
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=1, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
