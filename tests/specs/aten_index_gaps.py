"""Scatters, bucketize and integer cummax/cummin on dims other than the last and on strided inputs: the
general lowering's scatter.py, bucketize.py and integer scans (the ATen suite only takes dim -1). Index puts
(index_put.py): index_add along dim 1, broadcast index pairs, indexed dims apart (the indexed shape in front),
stores through ``x[:, j] = v`` with negative indices, int32 and fp16 (an fp32 scratch) accumulation."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x, idx, src, perm, bnd, k):
        added = x.t().scatter_add(1, idx.t(), src.t())  # a strided self, index and source; repeated indices
        placed = torch.scatter(x, 1, perm, x[:, : perm.shape[1]] * 2)  # distinct positions per row
        filled = torch.scatter(x, 0, idx[:1], -1.5)
        buckets = torch.bucketize(x, bnd)
        right = torch.bucketize(x.t(), bnd, right=True, out_int32=True)
        hi, hi_at = torch.cummax(k, 1)
        lo, lo_at = torch.cummin(k.long(), 0)
        rows, n_idx, n_perm = x.shape[0], idx.shape[0], perm.shape[1]
        i = idx[:, 0]  # repeated rows
        spread = x.index_add(1, perm[0], x[:, :n_perm], alpha=2)  # index_put with [None, j]
        pairs = x.index_put((idx[:, :1], perm[:1]), src[:, :n_perm], accumulate=True)  # (n_idx, 1) x (1, n_perm)
        wide = x[None, :, None, :].expand(2, rows, 3, -1)  # dims 1 and 3 indexed: the indexed shape is (n_idx, 2, 3)
        apart = torch.ops.aten.index_put.default(wide, [None, i, None, perm[:n_idx, 0]], src[:, :2, None], True)
        stored = x.t().clone()
        stored[-1 - perm[0]] = x[:, :n_perm].t() * 3  # x[j] = v: distinct (negative) rows, a transposed value
        counts = k.index_put((i,), k[:n_idx], accumulate=True)  # int32 atomics
        halves = x.half().index_put((i,), x[:n_idx].half(), accumulate=True)  # exact halves in fp16
        return (added, placed, filled, buckets, right, hi, hi_at, lo, lo_at, spread, pairs, apart, stored, counts,
                halves)


def _case(rows, cols, n_idx, n_perm, n_bnd, device):
    x = torch.randint(-8, 9, (rows, cols), device=device).float() / 2  # exact ties with the boundaries
    idx = torch.randint(0, rows, (n_idx, cols), device=device)
    src = torch.randn(n_idx, cols, device=device)
    perm = torch.rand(rows, cols, device=device).argsort(dim=1)[:, :n_perm].contiguous()
    bnd = (torch.randint(-8, 9, (n_bnd,), device=device).float() / 2).sort().values
    k = torch.randint(-3, 4, (rows, cols), device=device, dtype=torch.int32)  # ties: ATen reports the last index
    return (x, idx, src, perm, bnd, k)


def get_inputs(device="cpu"):
    return {"64x300": _case(64, 300, 48, 100, 33, device)}


def get_test_inputs(device="cpu"):
    return {"7x33": _case(7, 33, 5, 20, 9, device), "12x129": _case(12, 129, 12, 64, 1, device),
            "1x5": _case(1, 5, 1, 5, 4, device)}
