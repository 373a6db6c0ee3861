"""A KernelBench-format spec at production size (x * 2) with no get_test_inputs: checked on CPU shrunk."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
