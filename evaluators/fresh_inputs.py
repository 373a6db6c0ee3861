"""Fresh inputs for every timed call: the tensors a case hands to a callable, rewritten in place before each
call, outside the timed window.

Why: a candidate may remember its last answer, keyed on what it can see of its inputs (``data_ptr``, the
version counter, ``id()``, the storage). If the timing loop hands it the same unwritten tensors again and
again, every timed call after the first returns at once and the fitness is a fiction (on an H100, a swish
keyed on ``x._version`` was scored 17x against eager at 1.6 us for 4096x4096).

How: each case holds two contents for its input tensors, the timing seed's and the fresh seed's (the same
two the judge already checked, as the first and the fresh-input call of that seed). Before every call the
contents are swapped in place, so the tensors keep their addresses and shapes, their version counters move,
and their values alternate: a result kept from any earlier call is for other values, and the sampled output
checks (:mod:`evaluators.timing`) see it. Swapping in place costs two input copies of memory at most (plus a
bounded chunk), not three as copying from two stored sets would; the copies run before the L2 flush and the
start event, so they are never in a measurement.

A case whose fresh inputs have another structure (a jagged op draws its lengths per seed) cannot be swapped
in place; its calls alternate between the two whole sets, each rewritten in place before it is handed out
again (version counters move, values do not), which still defeats a memo on identity or version.
"""

from __future__ import annotations

from typing import Any

import torch

from evaluators.correctness import same_structure

CHUNK_BYTES = 64 << 20  # the swap's scratch: bounded, whatever the input size


class FreshInputs:
    """Two contents of one case's inputs; :meth:`advance` makes the next call see the other one."""

    def __init__(self, working: tuple[Any, ...], other: tuple[Any, ...]) -> None:
        self.working, self.other = working, other
        self.content = 0  # which content ``current()`` holds: 0 the timing seed's, 1 the fresh seed's
        self.in_place = same_structure(working, other)  # the correctness protocol's own refill test
        pairs = [(a, b) for a, b in zip(working, other, strict=False) if isinstance(a, torch.Tensor)]
        self._pairs = pairs if self.in_place else []
        self._largest = max((a.numel() * a.element_size() for a, _ in self._pairs), default=0)
        self._scratch: torch.Tensor | None = None  # allocated on the first swap, freed by close()

    def current(self) -> tuple[Any, ...]:
        """The argument tuple the next call receives (the same objects every time when swapped in place)."""
        return self.working if self.in_place or self.content == 0 else self.other

    def advance(self) -> int:
        """Rewrite the inputs for the next call; returns which content they now hold."""
        with torch.no_grad():
            if self.in_place:
                if self._scratch is None and self._largest:
                    self._scratch = torch.empty(min(self._largest, CHUNK_BYTES), dtype=torch.uint8,
                                                device=self._pairs[0][0].device)
                for a, b in self._pairs:
                    _swap(a, b, self._scratch)
            else:
                for t in self.other if self.content == 0 else self.working:
                    if isinstance(t, torch.Tensor) and t.numel():
                        t.copy_(t.clone())  # a write: the version moves, so the set is never handed unwritten
        self.content ^= 1
        return self.content

    def close(self) -> None:
        """Free the scratch (the pairs stay: a closed rotation can still swap, through a clone)."""
        self._scratch, self._largest = None, 0


def _swap(a: torch.Tensor, b: torch.Tensor, scratch: torch.Tensor | None) -> None:
    """Exchange the contents of two same-shaped tensors through a bounded scratch buffer."""
    if not a.numel():
        return
    if scratch is None or not (a.is_contiguous() and b.is_contiguous()):
        tmp = a.clone()
        a.copy_(b)
        b.copy_(tmp)
        return
    flat_a, flat_b = a.view(-1), b.view(-1)
    step = max(1, scratch.numel() // a.element_size())
    for start in range(0, flat_a.numel(), step):
        n = min(step, flat_a.numel() - start)
        tmp = scratch[: n * a.element_size()].view(a.dtype)
        tmp.copy_(flat_a[start:start + n])
        flat_a[start:start + n].copy_(flat_b[start:start + n])
        flat_b[start:start + n].copy_(tmp)
