"""Row-wise RMSNorm with a learned scale (fidelity benchmark op: a reduction per row)."""

import torch
import torch.nn as nn

HIDDEN = 4096


class PytorchModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(HIDDEN) + 0.5)

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def get_inputs(device="cpu"):
    return {"8192x4096": (torch.randn(8192, HIDDEN, device=device),)}


def get_test_inputs(device="cpu"):
    return {"5x4096": (torch.randn(5, HIDDEN, device=device),)}


def BYTES(case):
    return 2 * case[0].numel() * case[0].element_size() + HIDDEN * 4
