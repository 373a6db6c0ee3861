"""How a size constant scales down to its test value (:mod:`evaluators.shrink`): the scalings it tries in turn.

Each maps one production size to its test value given the target and the values already mapped, so a size keeps
the divisors it had (channels stay divisible by groups) where a scaling promises it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

KEEP_AT_MOST = 8  # ints up to this (kernel sizes, strides, groups, dims) are never changed


def keep_divisors(value: int, target: int, mapped: dict[int, int], twos: int = 0) -> int:
    """At most ``target`` where it can, and still a multiple of (the test value of) every constant that divides
    it (channels stay divisible by groups, embed_dim by num_heads) and of ``2**twos`` where the value was: a size
    halved by a literal pooling window or stride in the code stays even."""
    step = 1 << min(twos, (value & -value).bit_length() - 1)
    for small, new in mapped.items():
        if 0 < small < value and value % small == 0:
            step = math.lcm(step, new)
    return max(step, min(value, target) // step * step)


def power_of_two(value: int, target: int, mapped: dict[int, int]) -> int:
    return 1 << (min(value, target).bit_length() - 1)


def plain_cap(value: int, target: int, mapped: dict[int, int]) -> int:
    return min(value, target)


# tried in this order at each target: divisibility kept (with 8, 2, then 1 as the power of two kept), then
# powers of two (divide each other), then a plain cap
SCALINGS: tuple[Callable[[int, int, dict[int, int]], int], ...] = (
    partial(keep_divisors, twos=3), partial(keep_divisors, twos=1), keep_divisors, power_of_two, plain_cap)


def scaled_values(constants: dict[str, Any], small: set[int], target: int,
                  scale: Callable[[int, int, dict[int, int]], int], fixed: frozenset[int] | set[int] = frozenset(),
                  ) -> dict[int, int]:
    """Every int among the constants -> its test value, smallest first (larger ones may depend on them);
    ``small`` are the module's kept ints, divisors that the sizes they divide must keep; ``fixed`` values
    (structural constants') map to themselves."""
    everything: set[int] = set(small)
    for value in constants.values():
        everything.update(value if isinstance(value, (tuple, list)) else [value])
    mapped: dict[int, int] = {}
    for value in sorted(v for v in everything if v > 0):
        mapped[value] = value if value <= KEEP_AT_MOST or value in fixed else scale(value, target, mapped)
    return mapped


def apply(value: Any, mapping: dict[int, int]) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(mapping.get(v, v) for v in value)
    return mapping.get(value, value)
