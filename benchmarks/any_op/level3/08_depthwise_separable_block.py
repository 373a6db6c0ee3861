"""MobileNet-style block: depthwise 3x3 conv-BN-ReLU6, then pointwise 1x1 conv-BN-ReLU6 (eval mode)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 256
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.bn_dw = nn.BatchNorm2d(in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn_pw = nn.BatchNorm2d(out_channels)
        self.eval()

    def forward(self, x):
        x = F.relu6(self.bn_dw(self.depthwise(x)))
        return F.relu6(self.bn_pw(self.pointwise(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
