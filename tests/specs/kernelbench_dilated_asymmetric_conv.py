"""A KernelBench-format dilated, asymmetric conv2d at production size (no get_test_inputs): its kernel size,
stride, padding and dilation are above the never-changed small ints, and the CPU check must keep every one."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
out_channels = 64
height = 512
width = 256
kernel_size = (5, 9)
stride = (1, 2)
padding = (12, 20)
dilation = (3, 10)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
