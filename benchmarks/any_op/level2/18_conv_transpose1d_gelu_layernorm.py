"""ConvTranspose1d, GELU, LayerNorm over the length dim."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 64
length = 2048


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, length):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, 4, stride=2, padding=1)
        self.norm = nn.LayerNorm(2 * length)

    def forward(self, x):
        return self.norm(F.gelu(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, length]
