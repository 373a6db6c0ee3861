"""1-D max pooling, window 3, stride 2, padding 1."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 64
length = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.max_pool1d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
