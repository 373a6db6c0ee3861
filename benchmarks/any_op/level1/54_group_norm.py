"""Group normalisation with 8 groups over a 4-D activation map."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
num_groups = 8
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [num_groups, channels]
