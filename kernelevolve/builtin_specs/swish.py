"""Swish (SiLU) operator spec: y = x * sigmoid(x), elementwise, fp32.

A pure memory-bound op: one read and one write per element, so the roofline is DRAM bandwidth.
"""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    """Reference: eager PyTorch swish."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_init_inputs() -> list:
    return []


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases (the evaluator seeds torch before calling)."""
    return {
        "4096x4096": (torch.randn(4096, 4096, device=device),),
        "1M": (torch.randn(1 << 20, device=device),),
        "odd_2049x1000": (torch.randn(2049, 1000, device=device),),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter, including sizes that are not multiples of a block."""
    return {
        "1000": (torch.randn(1000, device=device),),
        "33x65": (torch.randn(33, 65, device=device),),
        "4096": (torch.randn(4096, device=device),),
    }


TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    # exp, add, div (sigmoid) and the final mul: ~4 FLOPs per element.
    return 4 * case[0].numel()


def BYTES(case) -> int:
    x = case[0]
    return 2 * x.numel() * x.element_size()  # read x once, write y once
