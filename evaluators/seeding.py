"""Seeding the generators right before a forward that is compared, alike on both sides of the comparison.

Why: a reference may draw random numbers in forward (a KernelBench LSTM draws its initial state each call). A
candidate that draws at the same point matches it only from the same generator state, and each side consumes
the generators differently before the call (building the pair, the inputs, other calls). So the judge's
reference call and the candidate's checked call, and a sampled timed call and its reference recompute, are
each preceded by the same seed.
"""

from __future__ import annotations

import torch

FORWARD_SEED_OFFSET = 104729


def seed_forward(seed: int, call: int) -> None:
    """Seed every generator for the ``call``-th compared forward of ``seed`` (call 0, 1: the checked calls;
    2 + rep: a sampled timed call)."""
    torch.manual_seed(seed + FORWARD_SEED_OFFSET * (call + 1))
