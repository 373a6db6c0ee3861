"""A KernelBench-format spec whose sizes are written into get_inputs, with no module-level constant to scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(2048, 4096)]


def get_init_inputs():
    return []
