"""A spec in KernelBench's format: class Model, get_inputs() -> one case as a flat list."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(2, 777)]


def get_init_inputs():
    return []
