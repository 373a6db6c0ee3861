"""A spec whose input length is drawn per seed (like jagged ops): the fresh-input call has a different size."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs(device="cpu"):
    n = int(torch.randint(1000, 3000, ()))
    return {"seeded_length": (torch.randn(n, device=device),)}
