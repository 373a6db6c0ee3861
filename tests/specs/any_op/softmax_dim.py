"""Own spec: softmax over a middle dim and log_softmax over the last (tiny sizes, two shapes)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.softmax(x, dim=1), torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(4, 300, 20)]


def get_test_inputs():
    return [[torch.randn(2, 150, 7)], [torch.randn(3, 5, 130)]]


def get_init_inputs():
    return []
