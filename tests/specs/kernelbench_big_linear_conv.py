"""A KernelBench-format spec at production size with no get_test_inputs: conv, then a linear layer whose
in_features is tied to the same constants as the input (the shrunk case must keep them consistent)."""

import torch
import torch.nn as nn

batch_size = 512
in_channels = 48
out_channels = 96
groups = 3
height = 96
width = 96
hidden = 4096
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups, height, width, hidden, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, groups=groups)
        self.fc = nn.Linear(out_channels * height * width // 4, hidden)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(self.conv(x), 2)
        return self.fc(y.flatten(1))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups, height, width, hidden, kernel_size]
