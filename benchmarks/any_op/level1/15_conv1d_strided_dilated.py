"""1-D convolution with stride 2 and dilation 3 (kernel 5, no bias)."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 96
out_channels = 96
length = 16384
kernel_size = 5
stride = 2
dilation = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation]
