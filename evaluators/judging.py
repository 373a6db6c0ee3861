"""The judge's memory: reference outputs computed once per (spec, cases, device, seed) and reused by every
candidate the worker judges, instead of rebuilding inputs and re-running the reference per candidate.

Bounded by bytes (least recently used first out), because production cases can be hundreds of MB per seed
and several workers share one GPU; and holding one spec at a time, because a worker that moves on to another
op (an ATen sweep) would otherwise keep every earlier op's outputs on the device.
``KE_REFERENCE_CACHE_MB`` overrides the bound (0 disables the cache).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator

import torch

from evaluators.correctness import reference_calls
from evaluators.spec import OperatorSpec

Call = tuple[int, dict[str, list[torch.Tensor]]]  # (call index, {case: the reference's outputs})
DEFAULT_MB = {"cuda": 1024, "cpu": 256}


class ReferenceCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple, tuple[list[Call], int]] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    @classmethod
    def for_device(cls, device: str) -> ReferenceCache:
        mb = os.environ.get("KE_REFERENCE_CACHE_MB")
        return cls(int(mb if mb is not None else DEFAULT_MB.get(device, 256)) << 20)

    @property
    def held_bytes(self) -> int:
        """Bytes of reference outputs kept between evaluations."""
        return self._bytes

    def calls(self, spec: OperatorSpec, which: str, device: str, seed: int) -> Iterator[Call]:
        """One seed's reference outputs, call by call: from the cache, or computed (and kept if they fit).
        A seed too large to keep is never held whole: each call's outputs go once the judge moves on."""
        key = (str(spec.path), spec.source_hash, which, device, seed)
        if key in self._entries:
            self.hits += 1
            self._entries.move_to_end(key)
            yield from self._entries[key][0]
            return
        self.misses += 1
        if any(k[:2] != key[:2] for k in self._entries):
            self._entries.clear()
            self._bytes = 0
            if device != "cpu":
                torch.cuda.empty_cache()  # give the memory back to the other processes on this GPU
        kept: list[Call] | None = []
        size = 0
        for index, expected in reference_calls(spec, which, device, seed):
            if kept is not None:
                size += sum(t.numel() * t.element_size() for ts in expected.values() for t in ts)
                projected = size * (2 - index)  # after the first call, both calls' outputs are about twice it
                kept = kept + [(index, expected)] if projected <= self.max_bytes else None
            yield index, expected
            del expected
        if kept is not None:
            self._entries[key] = (kept, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, freed) = self._entries.popitem(last=False)
                self._bytes -= freed
