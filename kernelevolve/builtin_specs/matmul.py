"""Matrix product spec: c = a @ b for fp16 a [M, K] and b [K, N], fp32 accumulation, fp16 output.

Compute-bound at the production sizes (4096^3 is 137 GFLOP against 96 MiB of traffic). The reference is
``a @ b`` (cuBLAS on a GPU), which accumulates in fp32 and rounds each output to fp16 once.
"""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    """Reference: eager ``a @ b``."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_init_inputs() -> list:
    return []


def _case(m: int, n: int, k: int, device: str, dtype: torch.dtype = torch.float16) -> tuple:
    return (torch.randn(m, k, device=device, dtype=dtype), torch.randn(k, n, device=device, dtype=dtype))


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "M4096_N4096_K4096_fp16": _case(4096, 4096, 4096, device),
        "M8192_N8192_K1024_fp16": _case(8192, 8192, 1024, device),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: one square, one with no dim a multiple of 16, and one with
    several output tiles in each direction (exercises grouped program orderings and their last group)."""
    return {
        "M64_N64_K64_fp16": _case(64, 64, 64, device),
        "M33_N47_K65_fp16": _case(33, 47, 65, device),
        "M300_N200_K96_fp16": _case(300, 200, 96, device),
    }


# Outputs are sums of K products of N(0,1) values: |c| ~ sqrt(K) (8 to 64). Both sides accumulate in
# fp32 and round once to fp16, so they differ by about 1 ulp (|c| * 2^-11); the summation order moves
# the fp32 sum by ~1e-6 relative. 1e-2 + 1e-2*|c| is a wide margin that still catches a dropped k-block.
TOLERANCES = {torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    a, b = case
    return 2 * a.shape[0] * a.shape[1] * b.shape[1]


def BYTES(case) -> int:
    a, b = case
    return (a.numel() + b.numel() + a.shape[0] * b.shape[1]) * a.element_size()
