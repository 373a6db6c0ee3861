"""GELU (tanh approximation) operator spec, elementwise: ``F.gelu(x, approximate="tanh")``.

y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), fp32, fp16 and bf16. PyTorch computes
half-precision inputs in fp32 and rounds once, so a kernel that computes in fp32 matches it to about one
ulp. Memory-bound: one read and one write per element.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class PytorchModel(nn.Module):
    """Reference: eager tanh-approximate GELU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_init_inputs() -> list:
    return []


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "4096x4096_fp32": (torch.randn(4096, 4096, device=device),),
        "4096x4096_fp16": (torch.randn(4096, 4096, device=device, dtype=torch.float16),),
        "4096x4096_bf16": (torch.randn(4096, 4096, device=device, dtype=torch.bfloat16),),
        "odd_2049x1000_fp16": (torch.randn(2049, 1000, device=device, dtype=torch.float16),),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: every dtype, sizes that are not multiples of a block, and a
    wide-range input (|x| up to ~40) that reaches the saturated tails where exp over- or underflows."""
    return {
        "1000_fp32": (torch.randn(1000, device=device),),
        "33x65_fp16": (torch.randn(33, 65, device=device, dtype=torch.float16),),
        "4096_bf16": (torch.randn(4096, device=device, dtype=torch.bfloat16),),
        "wide_range_777_fp32": (torch.randn(777, device=device) * 10,),
    }


# bf16 has 8 significant bits: one rounding step is up to 2^-7 relative, under 1e-2 + 1e-2*|y|.
TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    # x^3 (2), multiply-add, scale, tanh (~exp, add, divide), add 1, two multiplies: ~10 per element.
    return 10 * case[0].numel()


def BYTES(case) -> int:
    x = case[0]
    return 2 * x.numel() * x.element_size()  # read x once, write y once
