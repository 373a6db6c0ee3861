"""Small test inputs for a spec that only has production ones (KernelBench's format).

The Triton interpreter checks a candidate on the CPU, where production shapes (hundreds of MB) take minutes.
A KernelBench file builds its inputs and constructor arguments from module-level size constants, and both
functions read them from the module's globals at call time: calling ``get_inputs`` / ``get_init_inputs``
with those constants rebound to small values gives a consistent small case (a Linear's ``in_features`` still
matches the input's last dim). A scaling is accepted only when the reference runs on it, built and called
exactly as the judge will (constants restored), and its inputs and outputs stay under ``ELEMENT_CAP``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any

import torch

ELEMENT_CAP = 100_000  # input elements of a test case: the interpreter checks it in seconds
OUTPUT_CAP = 4 * ELEMENT_CAP  # outputs may grow past the inputs (transposed convs, outer products)
KEEP_AT_MOST = 8  # ints up to this (kernel sizes, strides, groups, dims) are never changed
TARGETS = (64, 32, 16, 8)  # the largest size a shrunk constant may take, tried in this order
TRIAL_SEED = 0


class ShrinkError(Exception):
    """No scaling of the file's size constants gives a small case the reference runs on."""


@dataclass(frozen=True)
class Shrink:
    """Rebinding of module constants: name -> (production value, test value)."""

    values: dict[str, tuple[Any, Any]]

    def record(self) -> dict[str, list[Any]]:
        """Plain data for results and run configs: {constant: [production, test]}."""
        return {name: [_plain(old), _plain(new)] for name, (old, new) in self.values.items()}


@contextmanager
def rebound(module: ModuleType, shrink: Shrink | None) -> Iterator[None]:
    """Module constants set to their test values for the duration; always restored."""
    if not shrink:
        yield
        return
    saved = {name: module.__dict__[name] for name in shrink.values}
    module.__dict__.update({name: new for name, (_, new) in shrink.values.items()})
    try:
        yield
    finally:
        module.__dict__.update(saved)


def plan_shrink(module: ModuleType, reference_cls: type[torch.nn.Module], get_inputs: Callable[[], Any],
                get_init_inputs: Callable[[], Any] | None) -> Shrink | None:
    """None when the production case is already small; else the first scaling that works, or ShrinkError."""
    produced = _count_elements(get_inputs)
    if produced <= ELEMENT_CAP:
        return None
    constants = size_constants(module)
    if not constants:
        raise ShrinkError(f"get_inputs() builds {produced:,} elements (cap {ELEMENT_CAP:,}) and the file has no "
                          "module-level size constants to scale down")
    small = {v for v in vars(module).values() if _is_int(v) and 0 < v <= KEEP_AT_MOST}  # groups, heads, strides
    reason = ""
    tried: list[dict[str, Any]] = []
    for target in TARGETS:
        for scale in SCALINGS:
            mapping = _scaled_values(constants, small, target, scale)
            values = {name: (old, _apply(old, mapping)) for name, old in constants.items()}
            if values in tried or all(old == new for old, new in values.values()):
                continue
            tried.append(values)
            shrink = Shrink({name: pair for name, pair in values.items() if pair[0] != pair[1]})
            with rebound(module, shrink):
                elements = _count_elements(get_inputs)
            if elements > ELEMENT_CAP:
                continue
            failure = _trial(module, shrink, reference_cls, get_inputs, get_init_inputs)
            if failure is None:
                return shrink
            reason = reason or failure  # the first failure, on the most faithful scaling, says most
    names = ", ".join(constants)
    raise ShrinkError(f"get_inputs() builds {produced:,} elements (cap {ELEMENT_CAP:,}) and no scaling of its size "
                      f"constants ({names}) runs the reference under the cap: {reason or 'all exceed it'}")


def size_constants(module: ModuleType) -> dict[str, Any]:
    """Public module-level ints (or tuples of ints) with a value above ``KEEP_AT_MOST``: the candidate sizes."""
    found: dict[str, Any] = {}
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if _is_int(value) and value > KEEP_AT_MOST:
            found[name] = value
        elif isinstance(value, (tuple, list)) and value and all(_is_int(v) for v in value) \
                and any(v > KEEP_AT_MOST for v in value):
            found[name] = value
    return found


# --- scalings: each maps one size to its test value given the target and the values already mapped ---------


def _keep_divisors(value: int, target: int, mapped: dict[int, int], twos: int = 0) -> int:
    """At most ``target`` where it can, and still a multiple of (the test value of) every constant that divides
    it (channels stay divisible by groups, embed_dim by num_heads) and of ``2**twos`` where the value was: a size
    halved by a literal pooling window or stride in the code stays even."""
    step = 1 << min(twos, (value & -value).bit_length() - 1)
    for small, new in mapped.items():
        if 0 < small < value and value % small == 0:
            step = math.lcm(step, new)
    return max(step, min(value, target) // step * step)


def _power_of_two(value: int, target: int, mapped: dict[int, int]) -> int:
    return 1 << (min(value, target).bit_length() - 1)


def _plain_cap(value: int, target: int, mapped: dict[int, int]) -> int:
    return min(value, target)


# tried in this order at each target: divisibility kept (with 8, 2, then 1 as the power of two kept), then
# powers of two (divide each other), then a plain cap
SCALINGS: tuple[Callable[[int, int, dict[int, int]], int], ...] = (
    partial(_keep_divisors, twos=3), partial(_keep_divisors, twos=1), _keep_divisors, _power_of_two, _plain_cap)


def _scaled_values(constants: dict[str, Any], small: set[int], target: int,
                   scale: Callable[[int, int, dict[int, int]], int]) -> dict[int, int]:
    """Every int among the constants -> its test value, smallest first (larger ones may depend on them);
    ``small`` are the module's kept ints, divisors that the sizes they divide must keep."""
    everything: set[int] = set(small)
    for value in constants.values():
        everything.update(value if isinstance(value, (tuple, list)) else [value])
    mapped: dict[int, int] = {}
    for value in sorted(v for v in everything if v > 0):
        mapped[value] = value if value <= KEEP_AT_MOST else scale(value, target, mapped)
    return mapped


def _apply(value: Any, mapping: dict[int, int]) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(mapping.get(v, v) for v in value)
    return mapping.get(value, value)


# --- checks ----------------------------------------------------------------------------------------------


def _trial(module: ModuleType, shrink: Shrink, reference_cls: type[torch.nn.Module],
           get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None) -> str | None:
    """Run the reference on the shrunk case as the judge will; None when it works, else why not.
    The global RNG is left as it was: inputs drawn after this must not depend on whether a plan ran."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(TRIAL_SEED)
        try:
            with rebound(module, shrink):
                init = list(get_init_inputs()) if get_init_inputs else []
                inputs = get_inputs()
            reference = reference_cls(*init).eval()
            with torch.no_grad():
                out = [reference(*case) for case in _case_list(inputs)]
        except Exception as exc:  # the reference rejects this scaling: try the next one
            return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    produced = _elements(out)
    if produced > OUTPUT_CAP:
        return f"the reference's output has {produced:,} elements (cap {OUTPUT_CAP:,})"
    return None


def _case_list(raw: Any) -> list[Any]:
    """The argument tuples of get_inputs()'s result, in any of the shapes ``normalize_cases`` accepts."""
    if isinstance(raw, dict):
        return [v if isinstance(v, (list, tuple)) else (v,) for v in raw.values()]
    if isinstance(raw, (list, tuple)) and raw and all(isinstance(item, (list, tuple)) for item in raw):
        return list(raw)
    return [raw if isinstance(raw, (list, tuple)) else (raw,)]


def _count_elements(get_inputs: Callable[[], Any]) -> int:
    """Elements get_inputs() builds, on the meta device when it allows (no memory, no time)."""
    try:
        with torch.random.fork_rng(devices=[]), torch.device("meta"):
            return _elements(get_inputs())
    except Exception:  # something in it needs real data (.item(), a data-dependent size): build it for real
        with torch.random.fork_rng(devices=[]):
            return _elements(get_inputs())


def _elements(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, dict):
        return sum(_elements(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_elements(v) for v in value)
    return 0


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
