"""Own spec: max pooling (2d padded, ceil mode; 1d; 3d) and average pooling (2d without pad counting, 3d).

The 1d input keeps its length across cases: ATen's max_pool1d pins it to a constant when traced.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x: torch.Tensor, s: torch.Tensor, v: torch.Tensor):
        return (F.max_pool2d(x, 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                F.max_pool1d(s, 3, 2, 1), F.max_pool3d(v, 2), F.avg_pool3d(v, 2, padding=1))


def get_inputs():
    return [torch.randn(2, 3, 16, 16), torch.randn(2, 4, 9), torch.randn(1, 2, 8, 8, 8)]


def get_test_inputs():
    return [[torch.randn(1, 3, 7, 9), torch.randn(2, 4, 9), torch.randn(1, 2, 4, 5, 6)],
            [torch.randn(2, 2, 8, 6), torch.randn(1, 3, 9), torch.randn(2, 1, 3, 3, 4)]]


def get_init_inputs():
    return []
