"""Binary elementwise add: two streams in, one out (fidelity benchmark op)."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x, y):
        return x + y


def get_inputs(device="cpu"):
    return {"16M": (torch.randn(1 << 24, device=device), torch.randn(1 << 24, device=device))}


def get_test_inputs(device="cpu"):
    return {"1000": (torch.randn(1000, device=device), torch.randn(1000, device=device))}


def BYTES(case):
    return 3 * case[0].numel() * case[0].element_size()
