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

import torch

from evaluators.correctness import reference_outputs
from evaluators.spec import OperatorSpec

Expected = dict[str, tuple[list[torch.Tensor], list[torch.Tensor]]]
DEFAULT_MB = {"cuda": 1024, "cpu": 256}


class ReferenceCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple, tuple[Expected, int]] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    @classmethod
    def for_device(cls, device: str) -> ReferenceCache:
        mb = os.environ.get("KE_REFERENCE_CACHE_MB")
        return cls(int(mb if mb is not None else DEFAULT_MB.get(device, 256)) << 20)

    def get(self, spec: OperatorSpec, which: str, device: str, seed: int) -> Expected:
        key = (str(spec.path), spec.source_hash, which, device, seed)
        if key in self._entries:
            self.hits += 1
            self._entries.move_to_end(key)
            return self._entries[key][0]
        self.misses += 1
        if any(k[:2] != key[:2] for k in self._entries):
            self._entries.clear()
            self._bytes = 0
            if device != "cpu":
                torch.cuda.empty_cache()  # give the memory back to the other processes on this GPU
        expected = reference_outputs(spec, which, device, seed)
        size = sum(t.numel() * t.element_size() for pair in expected.values() for ts in pair for t in ts)
        if size <= self.max_bytes:
            self._entries[key] = (expected, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, freed) = self._entries.popitem(last=False)
                self._bytes -= freed
        return expected
