"""RMSNorm operator spec: y = x / sqrt(mean(x^2, dim=-1) + eps) * weight, over the last dim of [M, N].

fp16 and fp32, eps 1e-6. The weight is a forward argument (not a module parameter) so one spec serves
every hidden size; it has x's dtype. ``F.rms_norm`` computes in fp32 and rounds once to the input dtype
(on CPU and on CUDA), so a kernel that accumulates in fp32 matches it to about one ulp.
Memory-bound: a fused kernel reads x once and writes y once.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-6


class PytorchModel(nn.Module):
    """Reference: ``F.rms_norm`` over the last dim with a per-column scale."""

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), weight, eps=EPS)


def get_init_inputs() -> list:
    return []


def _case(m: int, n: int, dtype: torch.dtype, device: str) -> tuple:
    # weight in [0.5, 1.5): a kernel that drops the scale is off by up to 50%
    return (torch.randn(m, n, device=device, dtype=dtype), (torch.rand(n, device=device) + 0.5).to(dtype))


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "4096x4096_fp16": _case(4096, 4096, torch.float16, device),
        "8192x1024_fp16": _case(8192, 1024, torch.float16, device),
        "8192x1024_fp32": _case(8192, 1024, torch.float32, device),
        "4096x4096_fp32": _case(4096, 4096, torch.float32, device),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: a non-power-of-two width, both dtypes, a wide row."""
    return {
        "16x128_fp32": _case(16, 128, torch.float32, device),
        "17x1000_fp16": _case(17, 1000, torch.float16, device),
        "7x4096_fp32": _case(7, 4096, torch.float32, device),
        "5x1_fp32": _case(5, 1, torch.float32, device),
    }


TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    # per element: square, sum-add, multiply by 1/rms, multiply by weight.
    return 4 * case[0].numel()


def BYTES(case) -> int:
    x, weight = case
    return 2 * x.numel() * x.element_size() + weight.numel() * weight.element_size()
