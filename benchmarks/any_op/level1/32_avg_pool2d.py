"""2-D average pooling, 3x3 window, stride 1, padding 1 (padding excluded from the count)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
