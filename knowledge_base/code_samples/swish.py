"""
---
op: swish
title: One program per block, vectorized elementwise
hardware: [any]
tags: [elementwise, memory-bound]
---
Flattens the input and gives each program one contiguous BLOCK_SIZE chunk: load, compute
x * sigmoid(x) in fp32, store in the input dtype. The op is bandwidth-bound, so the knobs only trade
per-program work (BLOCK_SIZE) against occupancy (NUM_WARPS); the tail is masked, so any power-of-two
BLOCK_SIZE is correct for any numel.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024  # elements per program; any power of two in [16, 8192]
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16
NUM_STAGES = 1  # 1..5; no loop to pipeline, kept for a uniform launch


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * tl.sigmoid(x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)  # x is contiguous, so y shares its flat layout
        n = x.numel()
        grid = (triton.cdiv(n, BLOCK_SIZE),)
        _swish_kernel[grid](x, y, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return y
