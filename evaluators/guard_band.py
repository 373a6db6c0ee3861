"""Guard bands: poisoned memory on both sides of every tensor a checked forward reads or allocates.

A kernel that reads past its tensor's ends (an unmasked overshoot, or a compiler that lets masked-off lanes
through: Triton 3.6 on Hopper did, benchmarks/results/padded_load_h200.md) reads whatever the caching
allocator put next to it. That is often zeros or finite data, so the read goes unnoticed or shows up only
under one allocation order. Placing each tensor inside a slab whose head and tail are NaN (or an integer
sentinel) makes such a read deterministic and visible to the judge, in every run.

Only tensors up to ``MAX_BANDED_BYTES`` are banded, and a case's inputs up to that many bytes in all: a
banded tensor briefly exists twice (the copy, or the allocation the band replaces), and the evaluator's
memory bound (issue #28: 3x a case's bytes plus 1 GiB) leaves room for that much, not more.
"""

from __future__ import annotations

import torch

BAND_BYTES = 64 * 1024  # each side; wider than any tile's overshoot past a row
MAX_BANDED_BYTES = 256 * 1024 * 1024
INT_POISON = -1234567


def poison(tensor: torch.Tensor) -> None:
    """Fill with what no honest result holds: NaN for floats, True for bools, a sentinel for integers."""
    if tensor.is_floating_point() or tensor.is_complex():
        tensor.fill_(float("nan"))
    elif tensor.dtype == torch.bool:
        tensor.fill_(True)
    else:
        tensor.fill_(INT_POISON if tensor.dtype not in (torch.uint8, torch.int8) else 113)


def _storage_elements(tensor: torch.Tensor) -> int:
    return 1 + sum((size - 1) * abs(stride) for size, stride in zip(tensor.shape, tensor.stride(), strict=True))


def bandable(tensor: torch.Tensor) -> bool:
    """Plain strided, no element stored twice (an expanded view cannot be copied into), and small enough."""
    return (tensor.numel() > 0 and tensor.layout == torch.strided and not tensor.is_quantized
            and all(stride > 0 or size == 1 for size, stride in zip(tensor.shape, tensor.stride(), strict=True))
            and _storage_elements(tensor) * tensor.element_size() <= MAX_BANDED_BYTES)


def banded_like(tensor: torch.Tensor) -> torch.Tensor:
    """A poisoned tensor of ``tensor``'s size, strides, dtype and device, in the middle of a poisoned slab."""
    band = -(-BAND_BYTES // tensor.element_size())
    slab = torch.empty(band + _storage_elements(tensor) + band, dtype=tensor.dtype, device=tensor.device)
    poison(slab)
    return slab.as_strided(tensor.shape, tensor.stride(), band)


def banded_copy(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor``'s values in banded storage (the tensor itself when it is too large or not plain strided)."""
    if not bandable(tensor):
        return tensor
    copy = banded_like(tensor)
    with torch.no_grad():
        copy.copy_(tensor)
    copy.requires_grad_(tensor.requires_grad)
    return copy


def banded_inputs(case: tuple) -> tuple:
    """A case's tensors in banded storage, up to ``MAX_BANDED_BYTES`` of them in all (the originals are alive
    until the case is rebuilt, so that is what the copies add at most); tensors sharing a storage keep it
    (their aliasing is the problem's)."""
    storages = [t.untyped_storage().data_ptr() for t in case if isinstance(t, torch.Tensor) and t.numel()]
    shared = {ptr for ptr in storages if storages.count(ptr) > 1}
    budget, out = MAX_BANDED_BYTES, []
    for item in case:
        if (isinstance(item, torch.Tensor) and item.numel() and item.untyped_storage().data_ptr() not in shared
                and bandable(item) and item.numel() * item.element_size() <= budget):
            budget -= item.numel() * item.element_size()
            item = banded_copy(item)
        out.append(item)
    return tuple(out)
