"""Conv1d without bias, an added per-channel bias, leaky ReLU, average pooling by 4."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 128
length = 8192


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 5, padding=2, bias=False)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1))

    def forward(self, x):
        return F.avg_pool1d(F.leaky_relu(self.conv(x) + self.bias, 0.1), 4)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]
