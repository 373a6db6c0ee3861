"""Swish x * sigmoid(x) in KernelBench's format at production size (no get_test_inputs): named swish so the
offline operator's swish samples draft for it, and checked on the CPU on a shrunk copy of its inputs."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
