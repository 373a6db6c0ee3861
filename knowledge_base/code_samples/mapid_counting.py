"""
---
op: mapid
title: MapId by vectorized counting, [BLOCK, MAP_BLOCK] compares over the whole table (small tables)
hardware: [any]
tags: [search, sorted, integer, int64, small-table, counting, broadcast-compare]
---
Because the table is sorted, the 0-based position of an id (when present) is the number of table entries
smaller than it. Each program takes BLOCK ids and walks the whole table in MAP_BLOCK chunks: one contiguous
(coalesced) load of the chunk and a [BLOCK, MAP_BLOCK] int64 compare "entry < id" added into a
[BLOCK, MAP_BLOCK] accumulator, which is summed over its columns once, after the walk. Equality is detected
with one gather per id at the count: a hit when mapping[count] == id (and count < M); the output is
count + 1 on a hit, else 0. Work per id is M compares but no dependent loads and no divergence: every program
reads the same table, which stays in L1 or L2 when M is small (64 or 4096 ids = 0.5 or 32 KB). That wins
for small M; for M in the millions the M compares per id make it orders of magnitude slower than a binary
search (still correct, just slow). Masked table lanes load INT64_MAX, and INT64_MAX < id is false for every
id, so any BLOCK / MAP_BLOCK is correct for any M and Q. The accumulator is int64 (the interpreter checks every int32
add for overflow, which doubles its time; on a GPU int32 would save registers: 64 x 64 at 4 warps is 32
values a thread).
See knowledge_base/guidance/case_mapid_mbdt.md for the trade-off with binary search.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 64  # ids per program; any power of two in [16, 8192]
MAP_BLOCK = 64  # table entries compared per loop step; any power of two in [16, 8192]
NUM_WARPS = 4  # any of 1, 2, 4, 8, 16


@triton.jit
def _mapid_count_kernel(map_ptr, ids_ptr, out_ptr, m, q, map_stride, ids_stride,
                        BLOCK: tl.constexpr, MAP_BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    in_range = offs < q
    ids = tl.load(ids_ptr + offs * ids_stride, mask=in_range, other=0)
    cols = tl.arange(0, MAP_BLOCK)
    acc = tl.zeros([BLOCK, MAP_BLOCK], dtype=tl.int64)
    ptrs = map_ptr + cols.to(tl.int64) * map_stride
    for start in range(0, m, MAP_BLOCK):
        # past the end: INT64_MAX, never smaller than an id
        chunk = tl.load(ptrs, mask=cols < m - start, other=9223372036854775807)
        acc += (chunk[None, :] < ids[:, None]).to(tl.int64)
        ptrs += MAP_BLOCK * map_stride
    count = tl.sum(acc, axis=1)  # table entries smaller than each id: its lower bound
    found_mask = in_range & (count < m)
    at = tl.load(map_ptr + count * map_stride, mask=found_mask, other=0)
    out = tl.where(found_mask & (at == ids), count + 1, 0)
    tl.store(out_ptr + offs, out, mask=in_range)


class TritonModel(nn.Module):
    def forward(self, mapping: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        m = mapping.shape[0]
        q = ids.shape[0]
        out = torch.empty(q, dtype=torch.int64, device=ids.device)
        if q == 0:
            return out
        grid = (triton.cdiv(q, BLOCK),)
        _mapid_count_kernel[grid](mapping, ids, out, m, q, mapping.stride(0), ids.stride(0),
                                  BLOCK=BLOCK, MAP_BLOCK=MAP_BLOCK, num_warps=NUM_WARPS)
        return out
