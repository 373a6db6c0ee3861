"""The judge's memory: reference outputs computed once per (spec, cases, device, seed, call) and reused by every
candidate the worker judges, instead of rebuilding inputs and re-running the reference per candidate.

Bounded by bytes, and holding one spec at a time (a worker that moves on to another op, in an ATen sweep,
would otherwise keep every earlier op's outputs on the device). The bound on a GPU is small, 256 MiB: what the
cache holds stays allocated through the whole evaluation, so it counts against the evaluation's memory bound
(3x the case plus 1 GiB, issue #28); a call's outputs larger than what is left are recomputed each time, which
costs the reference's run (milliseconds on a GPU) and nothing else. A full cache admits nothing more rather than
evicting: the judge asks for the same calls in the same order every evaluation, and least-recently-used
eviction over a cycle longer than the cache would miss every time. ``KE_REFERENCE_CACHE_MB`` overrides the
bound (0 disables it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import torch

from evaluators.correctness import reference_calls
from evaluators.spec import OperatorSpec

Call = tuple[int, dict[str, list[torch.Tensor]]]  # (call index, {case: the reference's outputs})
DEFAULT_MB = {"cuda": 256, "cpu": 256}


class ReferenceCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: dict[tuple, tuple[dict[str, list[torch.Tensor]], int]] = {}
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

    def calls(self, spec: OperatorSpec, which: str, device: str, seed: int, calls: tuple[int, ...] = (0, 1)
              ) -> Iterator[Call]:
        """One seed's reference outputs for ``calls``, call by call: from the cache, or computed (and kept if
        they fit). A call too large to keep is never held beyond the judge's use of it."""
        spec_key = (str(spec.path), spec.source_hash)
        if any(k[:2] != spec_key for k in self._entries):
            self._entries.clear()
            self._bytes = 0
            if device != "cpu":
                torch.cuda.empty_cache()  # give the memory back to the other processes on this GPU
        for index in calls:
            key = (*spec_key, which, device, seed, index)
            if key in self._entries:
                self.hits += 1
                yield index, self._entries[key][0]
                continue
            self.misses += 1
            for _, expected in reference_calls(spec, which, device, seed, calls=(index,)):
                size = sum(t.untyped_storage().nbytes() for ts in expected.values() for t in ts)  # what stays
                if self._bytes + size <= self.max_bytes:
                    self._entries[key] = (expected, size)
                    self._bytes += size
                yield index, expected
                del expected
