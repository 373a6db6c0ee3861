"""MapId operator spec (paper case study, up to 4.07x over PyTorch): position of each id in a sorted id table.

forward(mapping, ids): ``mapping`` is a sorted 1-D int64 tensor of M unique ids, ``ids`` a 1-D int64 tensor of
Q queries. The output is int64 [Q]: the 1-indexed position of ``ids[i]`` in ``mapping``, or 0 when it is absent
(0 is the "unknown id" slot of an embedding table, so known ids map to rows 1..M). The reference is what a
PyTorch user writes: ``searchsorted`` (lower bound), one gather to test for a hit, one ``where``.

Ids are drawn from [-2^40, 2^40): values far outside int32, negatives included, so a kernel that truncates to
32 bits or compares unsigned fails. About half the queries are hits (copies of random table entries); the
other half are random ids of the whole space, which almost never hit. Test cases add ids below the minimum
and above the maximum of the table (down to -2^62 and up to 2^62), M = 1, a table with one gap-free run of
ids, and Q that is not a multiple of any block.

The output is an integer, so it is compared exactly (no tolerance applies). Positions fit in int32 for any
M < 2^31; the output stays int64 like the reference's.
Memory- and latency-bound: no floating-point math; a binary search costs ceil(log2(M+1)) dependent gathers
per id, which hit cache for these tables (at most 16384 ids = 128 KB).
"""

import torch
import torch.nn as nn

ID_LOW, ID_HIGH = -(2**40), 2**40  # the id space queries and tables are drawn from
HIT_FRACTION = 0.5


class PytorchModel(nn.Module):
    """Reference: lower-bound ``torch.searchsorted``, a gather to test for a hit, ``torch.where``."""

    def forward(self, mapping: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        m = mapping.shape[0]
        if m == 0:
            return torch.zeros_like(ids)
        pos = torch.searchsorted(mapping, ids)
        hit = mapping[pos.clamp(max=m - 1)] == ids
        return torch.where(hit, pos + 1, 0)


def get_init_inputs() -> list:
    return []


def _table(m: int) -> torch.Tensor:
    """M unique sorted ids from the id space (unique of a slightly larger draw, then a random M of them)."""
    while True:
        pool = torch.unique(torch.randint(ID_LOW, ID_HIGH, (m + m // 8 + 8,), dtype=torch.int64))
        if pool.numel() >= m:  # duplicates are rare at 2^41 ids; redraw in the unlikely case of too many
            return pool[torch.randperm(pool.numel())[:m]].sort().values


def _queries(mapping: torch.Tensor, q: int) -> torch.Tensor:
    m = mapping.numel()
    misses = torch.randint(ID_LOW, ID_HIGH, (q,), dtype=torch.int64)
    if m == 0:
        return misses
    hits = mapping[torch.randint(0, m, (q,))]
    return torch.where(torch.rand(q) < HIT_FRACTION, hits, misses)


def _case(m: int, q: int, device: str) -> tuple:
    if device == "meta":  # shapes only: the simulated targets cost the eager reference on meta tensors
        return torch.empty(m, dtype=torch.int64, device="meta"), torch.empty(q, dtype=torch.int64, device="meta")
    mapping = _table(m)  # built on the CPU (unique and randperm need real data), then moved
    return mapping.to(device), _queries(mapping, q).to(device)


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling): Q = 4M for three table sizes, then
    a large batch against a mid-size table. The largest table is 16384 ids, not millions: the simulated
    targets interpret 24 sampled programs of every launch, and a program of the counting seed
    (knowledge_base/code_samples/mapid_counting.py) walks the whole table, so M = 1M (15625 chunk steps a
    program, about 15 minutes estimated) exceeds the evaluator's 300 s simulation limit."""
    return {
        "m64_q256": _case(64, 256, device),
        "m4096_q16384": _case(4096, 16384, device),
        "m16384_q65536": _case(16384, 65536, device),
        "m4096_q4m": _case(4096, 4_000_000, device),
    }


def _edges(device: str) -> tuple:
    """A 100-id table and queries at and around every edge: below the minimum, above the maximum, the
    extreme int64-ish values, each table entry and its neighbours (one off either way)."""
    mapping = _table(100)
    lo, hi = int(mapping[0]), int(mapping[-1])
    extra = torch.tensor([lo - 1, lo, hi, hi + 1, -(2**62), 2**62, 0, -1, 1], dtype=torch.int64)
    ids = torch.cat([extra, mapping - 1, mapping, mapping + 1])
    return mapping.to(device), ids[torch.randperm(ids.numel())].to(device)


def _dense(device: str) -> tuple:
    """A gap-free run of ids (neighbours of hits are hits too) and queries just around it."""
    start = int(torch.randint(-1000, 1000, ()))
    mapping = torch.arange(start, start + 37, dtype=torch.int64)
    ids = torch.randint(start - 5, start + 42, (77,), dtype=torch.int64)
    return mapping.to(device), ids.to(device)


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: M = 1, edges, a dense run, Q not a multiple of any block."""
    one = _table(1)
    one_ids = torch.cat([one - 1, one, one + 1, _queries(one, 14)])
    return {
        "m1_q17": (one.to(device), one_ids.to(device)),
        "m100_edges": _edges(device),
        "m37_dense_q77": _dense(device),
        "m300_q1001": _case(300, 1001, device),
        "m2500_q333": _case(2500, 333, device),
    }


def FLOPS(case) -> int:
    return 0  # integer compares and gathers only: no floating-point work


def BYTES(case) -> int:
    mapping, ids = case
    # read ids, write the int64 output, read the table once
    return 2 * ids.numel() * ids.element_size() + mapping.numel() * mapping.element_size()
