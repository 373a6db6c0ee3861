"""Own spec: a gated pointwise chain with a broadcast row and a residual (tiny sizes, two shapes)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.randn(width))

    def forward(self, x: torch.Tensor, g: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * self.scale * torch.sigmoid(1.702 * g) + r.clamp(min=-0.5)


def get_inputs():
    return [torch.randn(4, 6, 32), torch.randn(4, 6, 32), torch.randn(6, 32)]


def get_test_inputs():
    return [[torch.randn(2, 3, 32), torch.randn(2, 3, 32), torch.randn(3, 32)],
            [torch.randn(3, 5, 32), torch.randn(3, 5, 32), torch.randn(5, 32)]]


def get_init_inputs():
    return [32]
