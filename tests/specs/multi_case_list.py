"""Our format with a list of tuples: several cases, named case0, case1, ..."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x, y):
        return x + y


def get_inputs(device="cpu"):
    return [(torch.randn(5, device=device), torch.randn(5, device=device)),
            (torch.randn(3, 4, device=device), torch.randn(3, 4, device=device))]
