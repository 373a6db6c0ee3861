"""Row-wise softmax operator spec over the last dim of a 2-D tensor, fp32 and fp16.

Memory-bound: a fused kernel reads each row once and writes it once. The reference computes in the
input dtype, exactly like ``torch.softmax(x, dim=-1)`` (which accumulates fp16 internally in fp32).
"""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    """Reference: eager PyTorch softmax over the last dim."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_init_inputs() -> list:
    return []


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "4096x4096_fp32": (torch.randn(4096, 4096, device=device),),
        "4096x4096_fp16": (torch.randn(4096, 4096, device=device, dtype=torch.float16),),
        "8192x1000_fp16": (torch.randn(8192, 1000, device=device, dtype=torch.float16),),
        "1024x32768_fp32": (torch.randn(1024, 32768, device=device),),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: odd widths, both dtypes, a wide-ish row."""
    return {
        "64x33_fp32": (torch.randn(64, 33, device=device),),
        "16x1000_fp16": (torch.randn(16, 1000, device=device, dtype=torch.float16),),
        "7x4096_fp32": (torch.randn(7, 4096, device=device),),
        "5x1_fp32": (torch.randn(5, 1, device=device),),
    }


TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    # per element: max-compare, subtract, exp, sum-add, divide.
    return 5 * case[0].numel()


def BYTES(case) -> int:
    x = case[0]
    return 2 * x.numel() * x.element_size()  # read x once, write y once
