"""This process's peak device memory, with the working set of chosen calls measured apart (issue #28).

Why: an evaluation's peak is what the evaluator holds (inputs, outputs, the judge's copies) plus the working
memory of whichever kernel runs at that moment: the candidate's own intermediates, cuDNN's workspace under an
eager convolution, Inductor's buffers. The second part belongs to the kernels, not to the evaluator, and can
be large (an eager transposed 3-d conv on a 40 MB case used about 2 GB). To say which is which, a call's
working set is its peak above what was allocated when it started. ``torch.cuda`` has one peak counter per
process, so measuring a section resets it; this module carries the peak seen before, so the process's peak
over the whole command stays exact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import torch

T = TypeVar("T")
_carried = 0  # the largest peak seen before the counter was last reset
_scratch: dict[str, int] = {}  # label -> the largest working set less outputs seen since reset()


def active() -> bool:
    return torch.cuda.is_available() and torch.cuda.is_initialized()


def reset() -> None:
    """Start a new measurement (a command of the candidate process, a judgement)."""
    global _carried
    _carried = 0
    _scratch.clear()
    if active():
        torch.cuda.reset_peak_memory_stats()


def peak() -> int:
    """This process's peak allocation since :func:`reset`, sections included."""
    return max(_carried, torch.cuda.max_memory_allocated()) if active() else 0


def working_set(call: Callable[[], T], label: str | None = None) -> tuple[T, int]:
    """(``call()``, its peak allocation above what was allocated when it started; 0 off the GPU). With a
    ``label``, the working set less the returned outputs is kept as that kernel's scratch (:func:`scratches`)."""
    global _carried
    if not active():
        return call(), 0
    _carried = max(_carried, torch.cuda.max_memory_allocated())
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    result = call()
    top = torch.cuda.max_memory_allocated()
    _carried = max(_carried, top)
    working = max(0, top - base)
    if label is not None:
        from evaluators.footprint import nbytes

        _scratch[label] = max(_scratch.get(label, 0), working - nbytes(result))
    return result, working


def scratches() -> dict[str, int]:
    """label -> the most memory that kernel needed beyond its outputs while it ran, since :func:`reset`."""
    return dict(_scratch)
