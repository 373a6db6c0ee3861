"""A KernelBench-format transposed conv1d whose output is over the CPU caps at every extent, the fallback's
too: its kernel size alone makes each output 2,000,000 wide (4 channels: 8M elements at batch 1), and kernel
size and stride are structural (no input or output dimension doubles with them), so the CPU check must refuse
the file rather than check another problem."""

import torch
import torch.nn as nn

batch_size = 64
length = 4096
channels = 4
kernel_size = 2_000_000
stride = 16


class Model(nn.Module):
    def __init__(self, channels, kernel_size, stride):
        super().__init__()
        self.up = nn.ConvTranspose1d(channels, channels, kernel_size, stride=stride, bias=False)

    def forward(self, x):
        return self.up(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels, kernel_size, stride]
