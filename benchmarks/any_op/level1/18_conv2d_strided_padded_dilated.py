"""2-D convolution, 3x3 kernel with stride 2, padding 2 and dilation 2."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 192
width = 192
stride = 2
padding = 2
dilation = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, stride, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, stride, padding, dilation]
