"""Row sum spec: y = x.sum(dim=-1) for x [M, N], fp32 and fp16 in, same dtype out, fp32 accumulation.

PyTorch accumulates fp16 sums in fp32 and rounds the result once; so should a kernel. Memory-bound: the
input is read once and the output is M elements.
"""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    """Reference: eager ``x.sum(dim=-1)``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=-1)


def get_init_inputs() -> list:
    return []


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "4096x4096_fp32": (torch.randn(4096, 4096, device=device),),
        "8192x1024_fp16": (torch.randn(8192, 1024, device=device, dtype=torch.float16),),
        "1024x32768_fp32": (torch.randn(1024, 32768, device=device),),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: non-power-of-two widths, both dtypes, a row several blocks long."""
    return {
        "16x128_fp32": (torch.randn(16, 128, device=device),),
        "17x1000_fp16": (torch.randn(17, 1000, device=device, dtype=torch.float16),),
        "7x5000_fp32": (torch.randn(7, 5000, device=device),),
        "5x1_fp32": (torch.randn(5, 1, device=device),),
    }


# fp32: sums of N(0,1) values reach ~250 (4096 columns) and ~550 (32768), and a different summation
# order moves them by up to ~1.2e-4 absolute (measured on CPU: torch's sum against 1024-lane partial sums
# on the production shapes), also where the sum itself is near 0. So the absolute term is 1e-3, not 1e-4;
# a dropped element still moves a sum by ~1. fp16: both sides round the fp32 sum once (1 ulp <= 2^-11).
TOLERANCES = {torch.float32: (1e-3, 1e-4), torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    return case[0].numel()  # one add per element


def BYTES(case) -> int:
    x = case[0]
    return (x.numel() + x.shape[0]) * x.element_size()
