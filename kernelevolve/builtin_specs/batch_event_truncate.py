"""Batch Event Truncate operator spec (paper case study, 9.8x and 14.5x over PyTorch): keep each user's first
MAX_EVENTS events, for several features at once, on nested jagged data.

forward(outer_lengths, inner_lengths, values), all packed feature-major (feature 0's B users, then feature 1's,
...), so F features x B users are F*B independent (feature, user) sequences:
- ``outer_lengths`` int64 [F*B]: the number of events of each (feature, user);
- ``inner_lengths`` int64 [sum(outer_lengths)]: the number of values of each event, in order;
- ``values`` [sum(inner_lengths)]: the events' values, in order (fp32 for one production case, int64 ids for
  the other).
Every (feature, user) keeps its first MAX_EVENTS events. Outputs: the new outer lengths ``min(outer, MAX_EVENTS)``
[F*B], the kept events' inner lengths [sum of new outer], and the kept events' values, in order. One limit serves
all features here (the paper applies one per feature; a per-feature limit changes only where the limit is read).

The reference is what a PyTorch user writes: each event's rank inside its sequence from a cumsum and a
``repeat_interleave``, an event mask ``rank < MAX_EVENTS`` expanded to a value mask by a second
``repeat_interleave``, and two boolean-mask gathers (each sizes its output from the data: a host sync).

Production cases: F=8 x B=4096 (fp32 values) and F=16 x B=1024 (int64 ids in [-2^62, 2^62), so a 32-bit copy
fails); events per user ~ U[0, 200) and values per event ~ U{0..8}, so the limit of 50 drops about 56% of the
events and of the values. Test cases: zero-length users, users at the limit and one either side of it,
zero-length events, a single user, no events at all, and enough users to span many blocks of users.

The outputs are copies of input elements (no arithmetic), so they are compared exactly: integer outputs always
are, and the fp32 tolerance is (0, 0).
Memory-bound (plus launches and one host sync): the floor reads the outer and all inner lengths (every event's
length is needed to locate each user's values), reads only the kept values, and writes the three outputs.
The output sizes depend on the data, so a candidate must read totals back to the host: SIMULATE_ALL_PROGRAMS
makes the simulator interpret every program, so those totals are exact.
"""

import torch
import torch.nn as nn

MAX_EVENTS = 50
SIMULATE_ALL_PROGRAMS = True


class PytorchModel(nn.Module):
    """Reference: per-event rank from cumsum + repeat_interleave, event and value masks, boolean gathers."""

    def forward(self, outer_lengths: torch.Tensor, inner_lengths: torch.Tensor, values: torch.Tensor):
        n_events, n_values = inner_lengths.numel(), values.numel()
        new_outer = outer_lengths.clamp(max=MAX_EVENTS)
        first_event = torch.cumsum(outer_lengths, 0) - outer_lengths  # each sequence's first event
        rank = torch.arange(n_events, device=values.device) - torch.repeat_interleave(
            first_event, outer_lengths, output_size=n_events)
        keep_event = rank < MAX_EVENTS
        keep_value = torch.repeat_interleave(keep_event, inner_lengths, output_size=n_values)
        return new_outer, inner_lengths[keep_event], values[keep_value]


def get_init_inputs() -> list:
    return []


def _fixed(count: int, high: int, salt: int) -> torch.Tensor:
    """``count`` draws from U{0..high-1} that do not depend on the seed (a fixed multiset of lengths)."""
    return torch.randint(0, high, (count,), dtype=torch.int64, generator=torch.Generator().manual_seed(salt))


def _case(outer, max_inner: int, dtype: torch.dtype, device: str, salt: int = 0) -> tuple:
    """Outer lengths ``outer`` and inner lengths ~ U{0..max_inner}, each a fixed multiset dealt out in a random
    order: every seed gets a different structure, but the input sizes stay the same, which the evaluator's
    fresh-input second call needs (it refills the first call's input tensors in place). Built on the CPU (the
    sizes come from the data, also when the evaluator asks for "meta"), then moved."""
    outer = torch.as_tensor(outer, dtype=torch.int64)
    outer = outer[torch.randperm(outer.numel())]
    n_events = int(outer.sum())
    inner = _fixed(n_events, max_inner + 1, salt + 1)[torch.randperm(n_events)]
    n = int(inner.sum())
    if dtype == torch.int64:
        values = torch.randint(-(2**62), 2**62, (n,), dtype=torch.int64)
    else:
        values = torch.randn(n, dtype=dtype)
    return outer.to(device), inner.to(device), values.to(device)


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "f8_b4096_fp32": _case(_fixed(8 * 4096, 200, 10), 8, torch.float32, device, 10),
        "f16_b1024_int64": _case(_fixed(16 * 1024, 200, 20), 8, torch.int64, device, 20),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter."""
    edges = [0, MAX_EVENTS, MAX_EVENTS + 1, 3, 0, 120, MAX_EVENTS - 1, 1, 2 * MAX_EVENTS, 0]
    return {
        # F=2 x B=5: empty users, users at the limit and one either side of it; many empty events (U{0..2})
        "f2_b5_edges_fp32": _case(edges, 2, torch.float32, device, 1),
        "f3_b7_int64": _case(_fixed(3 * 7, 120, 2), 8, torch.int64, device, 2),
        "f1_b1_single_fp32": _case([77], 5, torch.float32, device, 3),
        "f2_b3_no_events_int64": _case([0] * 6, 8, torch.int64, device, 4),
        "f2_b4_no_values_fp32": _case([0, 60, 5, 50, 0, 0, 51, 1], 0, torch.float32, device, 5),
        # many blocks of users: block-to-block offsets must carry over
        "f4_b300_fp32": _case(_fixed(4 * 300, 70, 6), 3, torch.float32, device, 6),
    }


TOLERANCES = {torch.float32: (0.0, 0.0)}


def FLOPS(case) -> int:
    return 0  # index arithmetic and copies only: no floating-point work


def BYTES(case) -> int:
    outer, inner, values = case
    kept = outer.clamp(max=MAX_EVENTS)
    first = torch.cumsum(outer, 0) - outer
    rank = torch.arange(inner.numel(), device=inner.device) - torch.repeat_interleave(first, outer)
    kept_events = int(kept.sum())
    kept_values = int(inner[rank < MAX_EVENTS].sum())
    # read: outer and every inner length once, the kept values; write: new outer, kept lengths, kept values
    lengths = (2 * outer.numel() + inner.numel() + kept_events) * 8
    return lengths + 2 * kept_values * values.element_size()
