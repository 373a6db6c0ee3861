"""RMSNorm backward operator spec: (dx, dweight) of y = F.rms_norm(x, (N,), weight, eps=1e-6) over [M, N].

forward(dy, x, weight) returns the gradients of y with respect to x ([M, N], x's dtype) and weight ([N],
weight's dtype) for the upstream gradient dy, as PyTorch's own backward computes them:
dx = r * (dy * w) - x * r^3 * mean(dy * w * x) per row, r = rsqrt(mean(x^2) + eps), and
dweight = sum over rows of dy * x * r. dy, x and weight share one dtype (bf16 or fp32).

Why torch.func.vjp: the evaluator calls the reference under torch.no_grad() and also wraps it in
torch.compile (the compile baseline). torch.autograd.grad on requires-grad copies inside an
enable_grad() block gives the same numbers (bit for bit in eager on the CPU), but Dynamo does not trace
torch.autograd.grad (torch 2.13: a graph break, "trace_autograd_ops=False", plus a second one for the
requires_grad_() leaf), so its "compiled" baseline would be eager autograd run through Dynamo's fallback.
torch.func.vjp ignores the outer no_grad, runs PyTorch's own rms_norm backward formulas in eager, and
Dynamo captures it as one graph (no breaks), so torch.compile fuses it: both baselines are real.

Tolerances. dx is a per-row expression of O(1) values computed in fp32 and rounded once, like the
reference (a float32 emulation of the seed's formula matched the CPU reference exactly at 8192x2048 and
32768x256). 1 bf16 ulp is at most 2^-7 relative, and Triton 3.9's CPU interpreter truncates fp32 -> bf16
instead of rounding to nearest, so bf16 outputs may differ by 1 ulp: within 1e-2 + 1e-2*|v|.
dweight[j] sums M terms of O(1) and random sign: |dweight| ~ sqrt(M) (up to ~560 at M = 32768). Its fp32
rounding error grows with M and depends on the summation order, which no two implementations share
(a GPU reference's order is expected to differ from the CPU's). Measured on the CPU for the fp32
production cases (5 input draws per shape) with a float32 emulation of the seed kernel's order
(ROWS_PER_PROGRAM-row partials, then RED_BLOCK_P-row steps) at the defaults and at extreme reachable
tunables (ROWS_PER_PROGRAM 1..64, RED_BLOCK_P 16..8192): max abs error against the reference 2.4e-4 at
the defaults and 6.3e-4 at worst (ROWS_PER_PROGRAM = 1, at |dweight| ~ 500); |err| <= atol + 1e-4*|ref|
needs atol up to 1.1e-4 (the worst draw, at the defaults), against the reference and a float64 sum alike,
while the CPU reference itself is within 1.3e-5 + 1e-4*|exact|. fp32 (atol, rtol) = (1e-3, 1e-4) leaves a
~9x margin (a GPU reference with its own order is covered if its error is of the same size as the CPU's),
while a dropped row moves dweight by O(1) and a wrong dx term moves dx by ~0.1 or more.
bf16 dweight: both sides sum in fp32 and round once to bf16, so they differ by at most 1 ulp (measured:
0.03 at |dweight| ~ 240): bf16 keeps (1e-2, 1e-2).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-6


class PytorchModel(nn.Module):
    """Reference: PyTorch's backward of F.rms_norm (through torch.func.vjp; see the module docstring)."""

    def forward(self, dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor):
        n = x.shape[-1]
        _, vjp = torch.func.vjp(lambda x_, w_: F.rms_norm(x_, (n,), w_, eps=EPS), x, weight)
        dx, dweight = vjp(dy)
        return dx, dweight


def get_init_inputs() -> list:
    return []


def _case(m: int, n: int, dtype: torch.dtype, device: str) -> tuple:
    # weight in [0.5, 1.5): a kernel that drops it from dx is off by up to 50%
    dy = torch.randn(m, n, device=device, dtype=dtype)
    x = torch.randn(m, n, device=device, dtype=dtype)
    return (dy, x, (torch.rand(n, device=device) + 0.5).to(dtype))


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling): LLM hidden sizes in bf16
    (4096 tokens x 4096, 16384 tokens x 1024) and fp32 (8192 x 2048), a recsys-style 32768 x 256 fp32."""
    return {
        "4096x4096_bf16": _case(4096, 4096, torch.bfloat16, device),
        "16384x1024_bf16": _case(16384, 1024, torch.bfloat16, device),
        "8192x2048_fp32": _case(8192, 2048, torch.float32, device),
        "32768x256_fp32": _case(32768, 256, torch.float32, device),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: N not a power of two, M = 1, M not a multiple of any row count,
    both dtypes."""
    return {
        "37x100_fp32": _case(37, 100, torch.float32, device),
        "1x1000_fp32": _case(1, 1000, torch.float32, device),
        "70x300_bf16": _case(70, 300, torch.bfloat16, device),
        "5x1_fp32": _case(5, 1, torch.float32, device),
        "270x24_fp32": _case(270, 24, torch.float32, device),
    }


TOLERANCES = {torch.float32: (1e-3, 1e-4), torch.bfloat16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    # per element, about 11: x*x and its sum (2), dy*w (1), (dy*w)*x and its sum (2), dx = r*wdy - x*coef (3),
    # dweight's dy*x*r and the sum over rows (3); per-row scalars are negligible.
    return 11 * case[1].numel()


def BYTES(case) -> int:
    # dy, x and weight read once; dx and dweight written once
    dy, x, weight = case
    return (dy.numel() * dy.element_size() + 2 * x.numel() * x.element_size()
            + 2 * weight.numel() * weight.element_size())
