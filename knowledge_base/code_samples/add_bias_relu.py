"""
---
op: add_bias_relu
title: Fused bias add and ReLU on 2-D tiles, bias loaded once per tile
hardware: [any]
tags: [elementwise, broadcast, memory-bound, fused, activation]
---
y = max(x + bias, 0) with bias [N] broadcast over the rows of x [M, N]. Eager PyTorch runs an add and
then a ReLU, writing and re-reading an intermediate; this kernel reads x once and writes y once. A 2-D
grid gives each program a [BLOCK_M, BLOCK_N] tile: it loads BLOCK_N bias values once and broadcasts
them over BLOCK_M rows, so there is no per-element column index (x % N) to compute. The add happens in
fp32 and y is rounded to x's dtype once, like PyTorch's fp16 add. Rows and columns are masked, so any
power-of-two BLOCK_M and BLOCK_N are correct for any shape; x is addressed through its row stride.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# On an H200 (Triton 3.6): 22.8 us for 4096x4096 fp16 (eager 66.1 us, torch.compile 21.6 us); the 6 tile
# shapes tried were within 10% of each other (2.9 TB/s of the ~4.3 TB/s a device copy reaches).
BLOCK_M = 16  # rows per program; any power of two in [16, 8192] (Triton caps BLOCK_M * BLOCK_N at 2^20)
BLOCK_N = 256  # columns per program; any power of two in [16, 8192]
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16
NUM_STAGES = 1  # 1..5; no loop to pipeline, kept for a uniform launch


@triton.jit
def _add_bias_relu_kernel(x_ptr, b_ptr, y_ptr, M, N, x_row_stride, y_row_stride,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    mask = (rows[:, None] < M) & col_mask[None, :]
    bias = tl.load(b_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)  # once per tile
    x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    y = tl.maximum(x + bias[None, :], 0.0)
    tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        m, n = x.shape
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
        _add_bias_relu_kernel[grid](x, bias, y, m, n, x.stride(0), y.stride(0),
                                    BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return y
