"""Fused bias-add and ReLU spec: y = relu(x + bias), x [M, N], bias [N] broadcast over rows.

fp16 and fp32; bias has x's dtype and is a forward argument so one spec serves every width. Eager PyTorch
runs two kernels (an add, then a ReLU) and so moves the tensor three times; a fused kernel reads x once
and writes y once (the bias is N elements and stays in cache).
"""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    """Reference: eager ``torch.relu(x + bias)``."""

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + bias)


def get_init_inputs() -> list:
    return []


def _case(m: int, n: int, dtype: torch.dtype, device: str) -> tuple:
    return (torch.randn(m, n, device=device, dtype=dtype), torch.randn(n, device=device, dtype=dtype))


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "4096x4096_fp16": _case(4096, 4096, torch.float16, device),
        "8192x1024_fp16": _case(8192, 1024, torch.float16, device),
        "8192x1024_fp32": _case(8192, 1024, torch.float32, device),
        "4096x4096_fp32": _case(4096, 4096, torch.float32, device),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: widths that are not multiples of a block, both dtypes."""
    return {
        "64x128_fp32": _case(64, 128, torch.float32, device),
        "33x1000_fp16": _case(33, 1000, torch.float16, device),
        "7x4100_fp32": _case(7, 4100, torch.float32, device),
        "5x1_fp32": _case(5, 1, torch.float32, device),
    }


TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    return 2 * case[0].numel()  # an add and a max per element


def BYTES(case) -> int:
    x, bias = case
    return (2 * x.numel() + bias.numel()) * x.element_size()
