"""Hard swish, elementwise, on a 4-D activation map."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 128
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
