"""2-D max pooling with a dilated 3x3 window (stride 2, dilation 2)."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 128
width = 128
kernel_size = 3
stride = 2
dilation = 2


class Model(nn.Module):
    def __init__(self, kernel_size, stride, dilation):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, dilation]
