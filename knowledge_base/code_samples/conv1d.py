"""
---
op: conv1d
title: Conv1d as K shifted tile matmuls (tl.dot), program per (batch, co-block, l-block)
hardware: [any]
tags: [convolution, tensor-core, tl.dot, compute-bound]
---
out[b, co, l] = bias[co] + sum_{ci,k} w[co, ci, k] * x[b, ci, l + k - PAD]. Each program owns a
[BLOCK_CO, BLOCK_L] output tile of one batch row. For each tap k and each BLOCK_CI channel chunk it
loads a [BLOCK_CO, BLOCK_CI] weight tile and a [BLOCK_CI, BLOCK_L] input tile shifted by k - PAD
(zero outside [0, L): the padding) and accumulates tl.dot into fp32. Weights and bias are kept fp32
in the module and cast to the input dtype in the kernel, like the reference. fp16 uses tensor cores
with fp32 accumulation; fp32 uses input_precision="ieee" (TF32 would miss the 1e-4 tolerance).
Every dim is masked, so 96 channels, any L and any power-of-two block >= 16 are correct.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Defaults: the best of a 108-point sweep of this file's tunables on an H200 for the production shape
# (fp16 0.52 ms, fp32 1.29 ms; the suggested 64/32/32/4/2 took 1.57 ms and 1.92 ms).
BLOCK_L = 256  # output positions per program; any power of two in [16, 8192]
BLOCK_CO = 64  # output channels per program; any power of two in [16, 8192] (tl.dot needs >= 16)
BLOCK_CI = 16  # input channels per reduction step; any power of two in [16, 8192] (tl.dot needs >= 16)
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16
NUM_STAGES = 3  # 1..5; software-pipelining depth of the channel loop on GPUs


@triton.jit
def _conv1d_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C_in, C_out, L,
                   KSIZE: tl.constexpr, PAD: tl.constexpr,
                   BLOCK_L: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr):
    pid_l = tl.program_id(0)
    pid_co = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    co_mask = offs_co < C_out
    x_base = x_ptr + pid_b * C_in * L
    acc = tl.zeros([BLOCK_CO, BLOCK_L], dtype=tl.float32)
    for k in tl.static_range(KSIZE):
        pos = offs_l + (k - PAD)
        pos_mask = (pos >= 0) & (pos < L)  # zero padding at both edges, and the l tail
        for ci0 in range(0, C_in, BLOCK_CI):
            offs_ci = ci0 + tl.arange(0, BLOCK_CI)
            ci_mask = offs_ci < C_in
            # weight is [C_out, C_in, KSIZE] contiguous (fp32); cast in-kernel to the input dtype
            w = tl.load(w_ptr + offs_co[:, None] * (C_in * KSIZE) + offs_ci[None, :] * KSIZE + k,
                        mask=co_mask[:, None] & ci_mask[None, :], other=0.0)
            x = tl.load(x_base + offs_ci[:, None] * L + pos[None, :],
                        mask=ci_mask[:, None] & pos_mask[None, :], other=0.0)
            w = w.to(x.dtype)
            if x.dtype == tl.float32:
                acc = tl.dot(w, x, acc, input_precision="ieee")
            else:
                acc = tl.dot(w, x, acc)  # fp16 x fp16 -> fp32 accumulate
    bias = tl.load(b_ptr + offs_co, mask=co_mask, other=0.0)
    acc += bias.to(y_ptr.dtype.element_ty).to(tl.float32)[:, None]  # bias rounded like the reference's
    y = y_ptr + pid_b * C_out * L + offs_co[:, None] * L + offs_l[None, :]
    tl.store(y, acc.to(y_ptr.dtype.element_ty), mask=co_mask[:, None] & (offs_l < L)[None, :])


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        # Same shape and parameter names (conv.weight, conv.bias) as the reference. Sizes are literals,
        # not UPPER_CASE constants, so the tunable mutator cannot touch them.
        self.conv = nn.Conv1d(96, 96, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, c_in, length = x.shape
        c_out, _, ksize = self.conv.weight.shape
        y = torch.empty((batch, c_out, length), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(length, BLOCK_L), triton.cdiv(c_out, BLOCK_CO), batch)
        _conv1d_kernel[grid](x, self.conv.weight, self.conv.bias, y, c_in, c_out, length,
                             KSIZE=ksize, PAD=self.conv.padding[0],
                             BLOCK_L=BLOCK_L, BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI,
                             num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return y
