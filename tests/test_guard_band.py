"""Guard bands (evaluators/guard_band.py): poison on both sides of checked inputs and of a forward's
allocations, so a read past a tensor's ends is seen in every run. The end-to-end proof is in the adversarial
corpus (``out_of_bounds__*``, accepted without the bands); these pin the pieces and their limits."""

from __future__ import annotations

import torch

from evaluators import guard_band
from evaluators.guard import ForwardGuard


def _slab(t: torch.Tensor) -> torch.Tensor:
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())


def test_a_banded_copy_keeps_values_and_strides_between_poisoned_bands() -> None:
    x = torch.randn(6, 5).t()  # non-contiguous: the copy keeps its strides
    copy = guard_band.banded_copy(x)
    assert torch.equal(copy, x) and copy.stride() == x.stride()
    band = guard_band.BAND_BYTES // 4
    slab = _slab(copy)
    assert slab.numel() == 2 * band + 30 and slab[:band].isnan().all() and slab[-band:].isnan().all()
    ints = guard_band.banded_copy(torch.arange(4))
    assert _slab(ints)[0].item() == guard_band.INT_POISON and torch.equal(ints, torch.arange(4))


def test_inputs_sharing_a_storage_expanded_views_and_the_byte_budget_are_left_alone(monkeypatch) -> None:
    x, z = torch.randn(5, 7), torch.randn(3)
    out = guard_band.banded_inputs((x, x.t(), z, torch.randn(1, 4).expand(3, 4), 2.5))
    assert out[0] is x and out[2] is not z and out[4] == 2.5  # x and x.t() alias: kept
    assert not guard_band.bandable(out[3]) and out[3].stride() == (0, 1)
    monkeypatch.setattr(guard_band, "MAX_BANDED_BYTES", 5 * 7 * 4)
    first, second = guard_band.banded_inputs((torch.randn(5, 7), z))
    assert _slab(first).numel() > 35 and second is z  # the budget went to the first tensor


def test_the_forward_guard_hands_out_banded_poisoned_allocations() -> None:
    with ForwardGuard():
        y = torch.empty(3, 4)
        big = torch.empty(4)
    assert y.isnan().all() and y.storage_offset() == guard_band.BAND_BYTES // 4
    assert _slab(y).isnan().all() and big.isnan().all()
    with ForwardGuard(poison=False):
        plain = torch.empty(3, 4)
    assert plain.storage_offset() == 0
