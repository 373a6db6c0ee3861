"""
---
op: rmsnorm_backward
title: RMSNorm backward, fused dx per row plus deterministic two-stage dweight reduction
hardware: [any]
tags: [normalization, backward, reduction, row-wise, column-reduction, memory-bound, fused, deterministic]
---
Gradients of y = x * r * w, r = rsqrt(mean(x^2) + eps), over the last dim of [M, N]:
dx = r * (dy * w) - x * r^3 * mean(dy * w * x) per row, and dweight[j] = sum_i dy[i, j] * x[i, j] * r_i
over all M rows. Kernel 1 gives each program ROWS_PER_PROGRAM consecutive rows, each held whole in one
BLOCK = next_power_of_2(N) vector: it reads dy and x once, computes r and the row mean in fp32 registers,
stores dx (rounded once to x's dtype) and accumulates dy * x * r into an fp32 row that it writes to its own
row of a [programs, N] fp32 scratch buffer (torch.empty: every row is written). Kernel 2 sums that buffer
over its rows in a fixed order, RED_BLOCK_P rows by RED_BLOCK_N columns at a time, and casts to weight's
dtype: no atomics, so dweight is bitwise reproducible. The scratch costs 2 * programs * N * 4 bytes of
traffic, so ROWS_PER_PROGRAM trades scratch bytes against the number of programs (parallelism).
Register use grows with N (4096 fp32 columns at 8 warps is 16 values a thread per live vector).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-6  # the spec's eps (not a tunable)
ROWS_PER_PROGRAM = 16  # rows per kernel-1 program = scratch rows; 1..64; rows past the end are skipped
NUM_WARPS = 8  # kernel 1; any of 1, 2, 4, 8, 16
NUM_STAGES = 1  # kernel 1; 1..5
RED_BLOCK_P = 16  # kernel 2: scratch rows summed per step; any power of two in [16, 8192]
RED_BLOCK_N = 64  # kernel 2: columns per program; any power of two in [16, 8192]
RED_WARPS = 4  # kernel 2; any of 1, 2, 4, 8, 16


@triton.jit
def _rmsnorm_bwd_rows(dy_ptr, x_ptr, w_ptr, dx_ptr, part_ptr, n_rows, n_cols,
                      dy_row_stride, x_row_stride, dx_row_stride, w_stride, eps,
                      BLOCK: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols * w_stride, mask=col_mask, other=0.0).to(tl.float32)  # once per program
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(ROWS_PER_PROGRAM):
        row = pid * ROWS_PER_PROGRAM + i
        if row < n_rows:
            row64 = row.to(tl.int64)
            dy = tl.load(dy_ptr + row64 * dy_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
            x = tl.load(x_ptr + row64 * x_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
            r = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
            wdy = dy * w
            c = tl.sum(wdy * x, axis=0) / n_cols  # masked columns are 0 in x and dy
            dx = r * wdy - x * (r * r * r * c)
            tl.store(dx_ptr + row64 * dx_row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=col_mask)
            dw += dy * x * r
    tl.store(part_ptr + pid.to(tl.int64) * n_cols + cols, dw, mask=col_mask)


@triton.jit
def _rmsnorm_bwd_dweight(part_ptr, dw_ptr, n_parts, n_cols, dw_stride,
                         RED_BLOCK_P: tl.constexpr, RED_BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * RED_BLOCK_N + tl.arange(0, RED_BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros([RED_BLOCK_P, RED_BLOCK_N], dtype=tl.float32)
    for p0 in range(0, n_parts, RED_BLOCK_P):
        parts = p0 + tl.arange(0, RED_BLOCK_P)
        mask = (parts < n_parts)[:, None] & col_mask[None, :]
        acc += tl.load(part_ptr + parts.to(tl.int64)[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    tl.store(dw_ptr + cols * dw_stride, tl.sum(acc, axis=0).to(dw_ptr.dtype.element_ty), mask=col_mask)


class TritonModel(nn.Module):
    def forward(self, dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor):
        n_rows, n_cols = x.shape
        dx = torch.empty_like(x)
        dweight = torch.empty_like(weight)
        n_parts = triton.cdiv(n_rows, ROWS_PER_PROGRAM)
        partial = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x.device)
        block = triton.next_power_of_2(n_cols)  # the whole row in one block
        _rmsnorm_bwd_rows[(n_parts,)](dy, x, weight, dx, partial, n_rows, n_cols,
                                      dy.stride(0), x.stride(0), dx.stride(0), weight.stride(0), EPS,
                                      BLOCK=block, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM,
                                      num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        _rmsnorm_bwd_dweight[(triton.cdiv(n_cols, RED_BLOCK_N),)](partial, dweight, n_parts, n_cols, dweight.stride(0),
                                                                  RED_BLOCK_P=RED_BLOCK_P, RED_BLOCK_N=RED_BLOCK_N,
                                                                  num_warps=RED_WARPS)
        return dx, dweight
