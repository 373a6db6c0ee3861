"""fp16 matrix product with fp32 accumulation (fidelity benchmark op: compute-bound)."""

import torch
import torch.nn as nn

TOLERANCES = {torch.float16: (2e-2, 2e-2)}


class PytorchModel(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs(device="cpu"):
    return {"2048^3": (torch.randn(2048, 2048, device=device, dtype=torch.float16),
                       torch.randn(2048, 2048, device=device, dtype=torch.float16))}


def get_test_inputs(device="cpu"):
    return {"64x96x80": (torch.randn(64, 96, device=device, dtype=torch.float16),
                         torch.randn(96, 80, device=device, dtype=torch.float16))}


def FLOPS(case):
    a, b = case
    return 2 * a.shape[0] * a.shape[1] * b.shape[1]


def BYTES(case):
    a, b = case
    return (a.numel() + b.numel() + a.shape[0] * b.shape[1]) * 2
