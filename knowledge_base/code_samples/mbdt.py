"""
---
op: mbdt
title: MBDT bucketization, [BLOCK_B, BLOCK_F] tile, per-feature binary search over its own borders
hardware: [any]
tags: [search, gather, bucketize, binary-search, integer-output, memory-bound, 2d-tile]
---
One program per (block of BLOCK_B rows, block of BLOCK_F features). It loads the features' border ranges
(border_offsets[f], border_offsets[f + 1]) once, then a [BLOCK_B, BLOCK_F] tile of x with the feature
dimension contiguous (coalesced). Every lane runs a lower-bound binary search inside its own feature's
borders: lo is the number of borders known to be < x, n the size of the still unknown range; each round
gathers the border at lo + n // 2 and moves past it when it is < x (a border equal to x is not counted:
torch.bucketize right=False). The round count is the bit length of the largest border count in this block
of features (a scalar loop in the kernel: the host cannot read counts without torch compute), so
at most 7 rounds for 64 borders; finished lanes are masked out of the gathers. A feature's borders (at most
256 bytes) stay in L1, so the gathers are cheap next to the 12 bytes a value that x and the int64 bins
stream. The bin is border_offsets[f] + f + lo. Every dimension is masked, so any BLOCK_B / BLOCK_F is
correct for any B, F and border counts (0 included).
See knowledge_base/guidance/case_mapid_mbdt.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_B = 32  # rows per program; any power of two in [16, 8192]
BLOCK_F = 32  # features per program; any power of two in [16, 8192]
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16


@triton.jit
def _mbdt_kernel(x_ptr, borders_ptr, offsets_ptr, out_ptr, n_rows, n_feat, x_stride_b, x_stride_f, out_stride_b,
                 BLOCK_B: tl.constexpr, BLOCK_F: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    feats = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    feat_mask = feats < n_feat
    start = tl.load(offsets_ptr + feats, mask=feat_mask, other=0)
    count = (tl.load(offsets_ptr + feats + 1, mask=feat_mask, other=0) - start).to(tl.int32)
    # rounds = bit length of the largest count: the unknown range at least halves every round
    rest = tl.max(count, axis=0)
    n_iter = rest * 0
    while rest > 0:
        rest = rest // 2
        n_iter += 1
    mask = (rows < n_rows)[:, None] & feat_mask[None, :]
    x = tl.load(x_ptr + rows[:, None] * x_stride_b + feats[None, :] * x_stride_f, mask=mask, other=0.0)
    lo = tl.zeros([BLOCK_B, BLOCK_F], dtype=tl.int32)
    n = tl.zeros([BLOCK_B, BLOCK_F], dtype=tl.int32) + count[None, :]
    for _ in range(n_iter):
        half = n // 2
        mid = lo + half
        active = mask & (n > 0)
        border = tl.load(borders_ptr + start[None, :] + mid, mask=active, other=0.0)
        right = active & (border < x)
        lo = tl.where(right, mid + 1, lo)
        n = tl.where(right, n - half - 1, half)
    bins = start[None, :] + feats[None, :] + lo
    tl.store(out_ptr + rows[:, None] * out_stride_b + feats[None, :], bins, mask=mask)


class TritonModel(nn.Module):
    def forward(self, x: torch.Tensor, borders: torch.Tensor, border_offsets: torch.Tensor) -> torch.Tensor:
        n_rows, n_feat = x.shape
        out = torch.empty(n_rows, n_feat, dtype=torch.int64, device=x.device)
        grid = (triton.cdiv(n_rows, BLOCK_B), triton.cdiv(n_feat, BLOCK_F))
        _mbdt_kernel[grid](x, borders, border_offsets, out, n_rows, n_feat, x.stride(0), x.stride(1), out.stride(0),
                           BLOCK_B=BLOCK_B, BLOCK_F=BLOCK_F, num_warps=NUM_WARPS)
        return out
