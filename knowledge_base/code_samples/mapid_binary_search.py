"""
---
op: mapid
title: MapId by vectorized binary search, ceil(log2(M+1)) gather rounds per block of ids
hardware: [any]
tags: [search, gather, sorted, integer, int64, latency-bound, binary-search]
---
Each program takes BLOCK ids and runs the same lower-bound binary search on every lane at once: lo and hi
start at 0 and M, and each round gathers mapping[(lo + hi) // 2] for every lane still searching, moving lo
past it when it is smaller than the id and hi onto it otherwise. The interval at least halves each round,
so ceil(log2(M + 1)) rounds (M.bit_length(), computed on the host from the table's shape) always finish;
lanes that finished early are masked out of the loads. A last gather at lo tests for a hit, and the kernel
writes lo + 1 or 0. Cost per id: about log2(M) dependent gathers, so the kernel is latency-bound; the first
rounds read the same few table entries in every program (cached), only the last rounds miss. ids and the
output are streamed once (coalesced). Compares are int64 (ids span far beyond int32); positions are int32
(M < 2^31). Correct for any BLOCK (tails masked) and any M, including M = 0 (no loads, all misses).
See knowledge_base/guidance/case_mapid_mbdt.md for when vectorized counting beats this.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024  # ids per program; any power of two in [16, 8192]
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16


@triton.jit
def _mapid_bsearch_kernel(map_ptr, ids_ptr, out_ptr, m, q, map_stride, ids_stride,
                          N_ITER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    in_range = offs < q
    ids = tl.load(ids_ptr + offs * ids_stride, mask=in_range, other=0)
    lo = tl.zeros([BLOCK], dtype=tl.int32)
    hi = tl.zeros([BLOCK], dtype=tl.int32) + m
    for _ in range(N_ITER):
        searching = (lo < hi) & in_range
        mid = (lo + hi) // 2  # lo + hi < 2^31 because m < 2^30 is checked on the host
        v = tl.load(map_ptr + mid.to(tl.int64) * map_stride, mask=searching, other=0)
        right = searching & (v < ids)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(searching & (v >= ids), mid, hi)
    # lo is now the lower bound: the number of table entries smaller than the id
    found_mask = in_range & (lo < m)
    at = tl.load(map_ptr + lo.to(tl.int64) * map_stride, mask=found_mask, other=0)
    hit = found_mask & (at == ids)
    out = tl.where(hit, lo.to(tl.int64) + 1, 0)
    tl.store(out_ptr + offs, out, mask=in_range)


class TritonModel(nn.Module):
    def forward(self, mapping: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        m = mapping.shape[0]
        q = ids.shape[0]
        assert m < 2**30, "positions are int32 and lo + hi must not overflow"
        out = torch.empty(q, dtype=torch.int64, device=ids.device)
        if q == 0:
            return out
        n_iter = m.bit_length()  # ceil(log2(m + 1)): rounds until every interval is empty
        grid = (triton.cdiv(q, BLOCK),)
        _mapid_bsearch_kernel[grid](mapping, ids, out, m, q, mapping.stride(0), ids.stride(0),
                                    N_ITER=n_iter, BLOCK=BLOCK, num_warps=NUM_WARPS)
        return out
