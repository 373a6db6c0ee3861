"""What a tensor held at one moment, to tell later whether it was written: an exact copy when small, a
fingerprint when large.

Why: the correctness protocol checks that a call did not write into its inputs and did not change an earlier
call's output. It used to clone both, which at KernelBench's published sizes (6.4 GB inputs) cost a full extra
copy of each on the device (issue #28: one evaluation peaked at about 6x its case's bytes). Above
``CLONE_LIMIT`` a tensor is fingerprinted instead: two sums over its raw bits, one plain and one weighted by a
position pattern whose offset is drawn from the OS's entropy, in 64-bit integers that wrap (exact and
independent of the reduction order, so equal contents always give equal fingerprints). Memory: a bounded chunk.
"""

from __future__ import annotations

import random

import torch

CLONE_LIMIT = 64 << 20  # bytes: at most this, an exact copy; above, a fingerprint
CHUNK_ELEMENTS = 1 << 23  # words fingerprinted at a time (int64 temporaries of 64 MiB each)
_MODULUS = 65521  # the position pattern's period (a prime, so no power-of-two stride lines up with it)
_ENTROPY = random.SystemRandom()


class Snapshot:
    """One tensor's contents now; :meth:`same` says whether a tensor holds them later."""

    def __init__(self, tensor: torch.Tensor) -> None:
        tensor = tensor.detach()
        self.shape, self.dtype = tensor.shape, tensor.dtype
        self.copy: torch.Tensor | None = None
        self.digest: tuple[int, int] | None = None
        self._offset = _ENTROPY.randrange(_MODULUS)
        if tensor.numel() * tensor.element_size() <= CLONE_LIMIT:
            self.copy = tensor.clone()
        else:
            self.digest = fingerprint(tensor, self._offset)

    def same(self, tensor: torch.Tensor) -> bool:
        """Whether ``tensor`` holds what was snapshotted (NaNs equal to NaNs in the exact copy)."""
        if tensor.shape != self.shape or tensor.dtype != self.dtype:
            return False
        if self.copy is not None:
            return equal_or_nan_equal(self.copy, tensor)
        return fingerprint(tensor.detach(), self._offset) == self.digest


def fingerprint(tensor: torch.Tensor, offset: int = 0) -> tuple[int, int]:
    """(sum of the words, position-weighted sum of the words) over the tensor's raw bits, in wrapping int64."""
    plain = weighted = torch.zeros((), dtype=torch.int64, device=tensor.device)
    position = 0
    for chunk in _word_chunks(tensor):
        words = chunk.to(torch.int64)
        weights = torch.arange(position, position + words.numel(), dtype=torch.int64, device=words.device)
        weights = (weights + offset) % _MODULUS + 1
        plain = plain + words.sum()
        weighted = weighted + (words * weights).sum()
        position += words.numel()
    return int(plain), int(weighted)


def _word_chunks(tensor: torch.Tensor):  # noqa: ANN202 - a generator of 1-d integer views
    """The tensor's bits as 1-d integer chunks of at most CHUNK_ELEMENTS words, in element order."""
    if tensor.is_contiguous():
        flat = tensor.reshape(-1)
        words = _as_words(flat)
        for start in range(0, words.numel(), CHUNK_ELEMENTS):
            yield words[start:start + CHUNK_ELEMENTS]
        return
    rows = max(1, CHUNK_ELEMENTS // max(1, tensor[0].numel())) if tensor.dim() else 1
    for start in range(0, tensor.shape[0] if tensor.dim() else 1, rows):
        part = tensor[start:start + rows] if tensor.dim() else tensor
        yield _as_words(part.contiguous().reshape(-1))


def _as_words(flat: torch.Tensor) -> torch.Tensor:
    """A 1-d tensor's bits as integers: 32-bit words where its size and alignment allow, else bytes."""
    raw = flat.view(torch.uint8)
    if raw.numel() % 4 == 0 and raw.numel():
        try:
            return raw.view(torch.int32)
        except RuntimeError:  # a view starting off a 4-byte boundary
            pass
    return raw


def equal_or_nan_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values, with NaN equal to NaN (a NaN output is the same output on both calls)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    if not a.is_floating_point():
        return False
    return bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0))
                and torch.equal(a.isnan(), b.isnan()))
