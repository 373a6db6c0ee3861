"""1-D average pooling, window 8, stride 4."""

import torch
import torch.nn as nn

batch_size = 64
channels = 128
length = 8192
kernel_size = 8
stride = 4


class Model(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride]
