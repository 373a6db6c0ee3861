"""LayerNorm operator spec: y = (x - mean) / sqrt(var + eps) * weight + bias over the last dim of [M, N].

Like ``nn.LayerNorm(N)`` (biased variance, eps 1e-5), fp16 and fp32. Weight and bias are forward
arguments (not module parameters) so one spec serves every hidden size; they have x's dtype.
``F.layer_norm`` computes in fp32 and rounds once to the input dtype, so a kernel that accumulates in
fp32 matches it to about one ulp. Memory-bound: a fused kernel reads x once and writes y once.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-5


class PytorchModel(nn.Module):
    """Reference: ``F.layer_norm`` over the last dim with an affine weight and bias."""

    def forward(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def get_init_inputs() -> list:
    return []


def _case(m: int, n: int, dtype: torch.dtype, device: str) -> tuple:
    # a non-zero mean (+1) so a kernel that skips centring fails; weight in [0.5, 1.5), bias ~ N(0, 1)
    x = torch.randn(m, n, device=device) + 1.0
    weight = torch.rand(n, device=device) + 0.5
    bias = torch.randn(n, device=device)
    return (x.to(dtype), weight.to(dtype), bias.to(dtype))


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
        "5x3_fp32": _case(5, 3, torch.float32, device),
    }


TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    # per element: mean add, subtract, square, var add, multiply by 1/std, multiply-add weight and bias.
    return 7 * case[0].numel()


def BYTES(case) -> int:
    x, weight, bias = case
    params = (weight.numel() + bias.numel()) * weight.element_size()
    return 2 * x.numel() * x.element_size() + params
