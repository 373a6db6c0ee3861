"""
---
op: matmul
title: Grouped (GROUP_M L2 swizzle) tiled tl.dot, wrapped tile indices, unmasked K loop when K divides
hardware: [any]
tags: [matmul, gemm, tensor-core, tl.dot, compute-bound, l2-swizzle, grouped-ordering]
---
A 1-D grid of output tiles in grouped order: programs are numbered down a column of GROUP_M tile
rows before moving to the next tile column, so the programs running at the same time share GROUP_M
row panels of a and a few column panels of b, and most of their loads hit L2 instead of DRAM (plain
row-major order streams all of b once per tile row). Each program accumulates a
[BLOCK_M, BLOCK_N] tile over K in fp32 with tl.dot (tensor cores for fp16) and rounds it to the output
dtype once, like the reference. Row and column indices of the loads wrap (% M, % N) instead of being
masked: a partial edge tile recomputes valid rows, only the store is masked, and the loads stay
unpredicated and vectorised. When BLOCK_K divides K (EVEN_K) the K loop has no masks either; otherwise
the K tail is masked to 0. Pointers advance by BLOCK_K each step. Fixed tunables, no autotuning:
128x256x64 tiles, 8 warps and 3 stages is the Triton tutorial's fp16 configuration for Ampere and
Hopper (3 * (128*64 + 64*256) * 2 bytes = 144 KiB of shared memory for the pipeline).
Any power-of-two block >= 16 and any GROUP_M >= 1 are correct for any shape.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Defaults: the best of 7 tile/warp/stage settings tried on an H200 (Triton 3.6): 189 us for 4096^3 (727
# TFLOP/s; cuBLAS 181 us) and 239 us for M=N=8192, K=1024 (cuBLAS 218 us). 128x128x64 took 210-215 us on
# 4096^3. Every power-of-two block >= 16 is correct; on a GPU, larger tiles or more stages can exceed shared
# memory (an out-of-resources error at launch, not a wrong answer).
BLOCK_M = 128  # output rows per program; a power of two >= 16 (tl.dot needs >= 16)
BLOCK_N = 256  # output columns per program; a power of two >= 16
BLOCK_K = 64  # reduction step; a power of two >= 16
GROUP_M = 8  # tile rows per group of the program ordering; any integer in [1, 64] (1 = row-major)
NUM_WARPS = 8  # any of 1, 2, 4, 8, 16
NUM_STAGES = 3  # 1..5; software-pipelining depth of the K loop on GPUs (shared memory grows with it)


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    # grouped ordering: program id -> (pid_m, pid_n), GROUP_M tile rows per group, column-major inside it
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)  # the last group may be shorter
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    # wrapped (not masked) row and column indices for the loads; the store below is masked
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)
        acc = tl.dot(a, b, acc)  # fp16 x fp16 -> fp32 accumulate
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


class TritonModel(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), dtype=a.dtype, device=a.device)
        grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
        _matmul_kernel[grid](a, b, c, m, n, k,
                             a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                             BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                             EVEN_K=k % BLOCK_K == 0, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return c
