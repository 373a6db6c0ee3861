"""PFFN operator spec: the paper's per-feature feed-forward block (bmm+bias, GELU, RMSNorm, bmm+bias, RMSNorm).

Interpretation implemented here: the input x is [B, N, D] (B rows of a batch, N features, D model dim) and
every feature n has its own weights. With h and o computed per feature n:
    h = x[:, n, :] @ w1[n] + b1[n]          (w1 [N, D, H], b1 [N, H])
    h = rms_norm(gelu(h), g1)               (exact erf GELU; g1 [H] shared by all features, eps 1e-6)
    o = h @ w2[n] + b2[n]                   (w2 [N, H, D], b2 [N, D])
    y[:, n, :] = rms_norm(o, g2)            (g2 [D], eps 1e-6)
The reference writes it as two ``torch.baddbmm`` over the feature-major view x.transpose(0, 1) and returns
the [B, N, D] view of the [N, B, D] result; a candidate returns a [B, N, D] tensor of x's dtype with the same
values (its strides need not match: the evaluator compares values).

Design choice: weights are forward inputs, not module parameters. Parameters sized [N, D, H] would fix one
shape per module, but the evaluator builds the module once (from ``get_init_inputs()``) and runs it on every
case, and the four production shapes differ in N, D and H. So ``get_inputs`` builds, per case, fp32 weights
(the dtype a module with fp32 master parameters holds) from the evaluator's seed: w1/w2 uniform like
nn.Linear's init but scaled by sqrt(3) (variance 1/fan_in, so pre-activations are about N(0, 1) and GELU sees
both signs), biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)) like nn.Linear, RMSNorm scales U[0.5, 1.5) (a kernel
that drops a scale is off by up to 50%). The reference casts every weight to x's dtype first, as a module with
fp32 parameters would; a candidate reads the fp32 weights and casts them in its kernel (no torch compute is
allowed in forward). Fresh weights per seed and per fresh-input call also defeat weight caching.

Where the reference rounds (checked on CPU; cuBLAS's beta=1 epilogue and the CUDA kernels are expected to round
at the same points, not checked on a GPU here): each
baddbmm accumulates in fp32, adds the (x.dtype-rounded) bias in fp32 and rounds once; GELU computes in fp32
and rounds once; F.rms_norm computes in fp32 (weight multiply included) and rounds once. So a bf16 reference
has four rounding points before the output: after bias1, GELU, RMSNorm1, bias2, plus the output's.

Tolerances. bf16: elementwise (0.1, 2e-2) plus a mean-absolute-error bound of 0.012. Outputs are
RMS-normalised times U[0.5, 1.5) scales, so |y| <= ~7, where 1 ulp of bf16 is up to 0.03. A kernel that rounds
where the reference rounds differs only where another fp32 summation order flips an intermediate across a
rounding boundary, and at the production sizes (39-105 M outputs) the tail of those flips is long. Measured
on an H200 (torch 2.11, triton 3.6, 2026-11-21, seed 0, all four production cases), max abs differences:
torch.compile of this very reference vs eager 0.0625-0.094; eager bf16 vs the reference evaluated in fp64
0.053-0.064; the seed kernel vs fp64 0.047-0.053 (as accurate as eager); the seed vs eager 0.0625. The
tolerance first used here, (2e-2, 2e-2), set from a 6-feature CPU emulation (max 0.031), rejected
torch.compile itself on 18-68 elements per case, so it measured summation order, not correctness; 0.1 admits
the measured spread with a little room. Because a loose elementwise bound could hide a small systematic
error, MEAN_ABS_ERR also bounds the mean over all elements: the bf16 reference's own mean error against fp64
is 0.0039-0.0041 (CPU, 12 features per production shape), a candidate as accurate as it is then within about
twice that of it, and 0.012 is three times. What still fails: a dropped bias (an emulated 17-24x the old
tolerance, 0.34-0.48, so 3-5x the new one), a dropped RMSNorm scale (79-90x the old), and a RMSNorm over the
padded H (0.03 max, but a bias of every element: the fp32 test cases catch it at 300x their tolerance; on a
GPU, where only the bf16 production cases run, only the mean bound stands against it). tanh-approximated GELU
passes, as before (not distinguishable in bf16).
fp32 (1e-4, 1e-4), the project default: both sides are IEEE fp32 (the seed uses input_precision="ieee"; a CUDA
fp32 bmm uses TF32 only when TF32 is enabled for CUDA matmuls, off by default, and the evaluator must leave it
off); measured error of the seed 1.2e-6. TF32 dots would miss it (about 1e-3 relative).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-6


class PytorchModel(nn.Module):
    """Reference: per-feature FFN with two baddbmm, exact GELU and two RMSNorms; weights cast to x.dtype."""

    def forward(self, x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, g1: torch.Tensor,
                w2: torch.Tensor, b2: torch.Tensor, g2: torch.Tensor) -> torch.Tensor:
        dt = x.dtype
        w1, b1, g1, w2, b2, g2 = (t.to(dt) for t in (w1, b1, g1, w2, b2, g2))
        hidden, dim = w1.shape[2], w2.shape[2]
        h = torch.baddbmm(b1[:, None, :], x.transpose(0, 1), w1)  # [N, B, H]
        h = F.gelu(h)  # exact (erf)
        h = F.rms_norm(h, (hidden,), g1, eps=EPS)
        o = torch.baddbmm(b2[:, None, :], h, w2)  # [N, B, D]
        o = F.rms_norm(o, (dim,), g2, eps=EPS)
        return o.transpose(0, 1)  # [B, N, D] view


def get_init_inputs() -> list:
    return []


def _uniform(shape: tuple, bound: float, device: str) -> torch.Tensor:
    return (torch.rand(shape, device=device) * 2.0 - 1.0) * bound


def _case(b: int, n: int, d: int, h: int, dtype: torch.dtype, device: str) -> tuple:
    """(x, w1, b1, g1, w2, b2, g2): x in ``dtype``, every weight fp32."""
    x = torch.randn(b, n, d, device=device, dtype=dtype)
    w1 = _uniform((n, d, h), math.sqrt(3.0 / d), device)
    b1 = _uniform((n, h), 1.0 / math.sqrt(d), device)
    g1 = torch.rand(h, device=device) + 0.5
    w2 = _uniform((n, h, d), math.sqrt(3.0 / h), device)
    b2 = _uniform((n, d), 1.0 / math.sqrt(h), device)
    g2 = torch.rand(d, device=device) + 0.5
    return (x, w1, b1, g1, w2, b2, g2)


# (B, N, D, H) of the paper's production cases
PROD_SHAPES = ((1024, 200, 256, 160), (1024, 200, 192, 96), (1024, 400, 256, 160), (1024, 150, 96, 192))


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first, all bf16 (the evaluator seeds torch before calling)."""
    return {f"b{b}_n{n}_d{d}_h{h}_bf16": _case(b, n, d, h, torch.bfloat16, device) for b, n, d, h in PROD_SHAPES}


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: D and H not powers of two, both dtypes; B=70 spans several row
    blocks with a ragged tail, D=96 leaves a partial reduction chunk, H=160 pads to 256 like production."""
    return {
        "b5_n3_d24_h20_fp32": _case(5, 3, 24, 20, torch.float32, device),
        "b5_n3_d24_h20_bf16": _case(5, 3, 24, 20, torch.bfloat16, device),
        "b70_n2_d96_h160_bf16": _case(70, 2, 96, 160, torch.bfloat16, device),
        "b37_n2_d40_h48_fp32": _case(37, 2, 40, 48, torch.float32, device),
    }


# bf16: the measured spread of legitimate implementations (torch.compile vs eager up to 0.094 on an H200), and a
# mean bound three times the bf16 reference's own mean error; the module docstring has the measurements.
TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (0.1, 2e-2)}
MEAN_ABS_ERR = {torch.bfloat16: 0.012}


def FLOPS(case) -> int:
    """Two GEMMs (2*B*N*D*H each) plus elementwise work counted as: bias add 1, GELU 8 (erf as ~6), RMSNorm 4
    (square, add, scale, weight) per hidden element; bias 1 and RMSNorm 4 per output element."""
    x, w1 = case[0], case[1]
    b, n, d = x.shape
    h = w1.shape[2]
    return 2 * 2 * b * n * d * h + b * n * (13 * h + 5 * d)


def BYTES(case) -> int:
    """x read once, the output written once (x's dtype), every weight read once in its own dtype (fp32)."""
    x = case[0]
    weights = sum(t.numel() * t.element_size() for t in case[1:])
    return 2 * x.numel() * x.element_size() + weights
