"""
---
op: softmax
title: Online softmax, column-block loop, any row width
hardware: [any]
tags: [reduction, row-wise, memory-bound, online-softmax, wide-rows]
---
One program per row loops over the row in BLOCK_SIZE chunks. Pass 1 keeps a running max m and a
running sum s, rescaling s by exp(m_old - m_new) whenever the max grows (online softmax), so it needs
one read instead of two. Pass 2 re-reads the row and writes exp(x - m) / s. Costs two reads per
element (the second often hits L2) but never spills, so it suits rows too wide for one register
block. Any power-of-two BLOCK_SIZE is correct for any n_cols (the tail is masked).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024  # columns per loop step; any power of two in [16, 8192]
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16
NUM_STAGES = 2  # 1..5; software-pipelines the column loops' loads on GPUs


@triton.jit
def _softmax_looped_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    m = float("-inf")  # running max
    s = 0.0  # running sum of exp(x - m)
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols  # every block has >= 1 valid column, so m_new is finite
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv_s = 1.0 / s
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp(x - m) * inv_s
        tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        _softmax_looped_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK_SIZE=BLOCK_SIZE,
                                          num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return y
