"""Cases that differ in dtype, rank and broadcast on purpose, as the ATen suite's do: one trace cannot serve
them all (its index math is per rank, its types per dtype, its broadcasts per size-1 dim)."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x, y):
        return torch.maximum(x, y) * 2 + y


def get_inputs(device="cpu"):
    return {"1000_fp32": (torch.randn(1000, device=device), torch.randn(1000, device=device))}


def get_test_inputs(device="cpu"):
    def ints(*shape):
        return torch.randint(-50, 50, shape, device=device, dtype=torch.int32)

    return {
        "33_fp32": (torch.randn(33, device=device), torch.randn(33, device=device)),
        "7x33_fp16": (torch.randn(7, 33, device=device).half(), torch.randn(7, 33, device=device).half()),
        "65_int32": (ints(65), ints(65)),
        "7x33_row_fp32": (torch.randn(7, 33, device=device), torch.randn(33, device=device)),
        "0x16_empty_fp32": (torch.randn(0, 16, device=device), torch.randn(0, 16, device=device)),
    }
