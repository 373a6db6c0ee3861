"""Small test inputs for a spec that only has production ones (KernelBench's format).

The Triton interpreter checks a candidate on the CPU, where production shapes (hundreds of MB) take minutes.
A KernelBench file builds its inputs and constructor arguments from module-level size constants, and both
functions read them from the module's globals at call time: calling ``get_inputs`` / ``get_init_inputs``
with those constants rebound to small values gives a consistent small case (a Linear's ``in_features`` still
matches the input's last dim). A scaling is accepted only when the reference runs on it, built and called
exactly as the judge will (constants restored), and its inputs and outputs stay under ``ELEMENT_CAP``.

Only extents are scaled: batch, length, channels, features, spatial sizes. A structural constant (kernel size,
stride, padding, dilation, groups, heads) is never changed, because the smaller case would be another problem
(a dilated conv2d with kernel (5, 9) was once checked at (5, 8)). A constant is an extent when doubling it
doubles some dimension of the inputs or of the reference's output (found on the meta device: no memory, no
time); anything else is structural.

Simulated targets check a candidate on the interpreter and estimate it at the production sizes, so a size
the candidate fixes from its constructor args (a LayerNorm's width, a depthwise conv's groups) must be the
production one: ``keep_init`` plans a case that keeps every constant the constructor args read, scales only
the others (batch, spatial sizes), never to 1 (``torch.export`` fixes a dim of 1), and refuses where the
production model has more than ``PARAM_CAP`` parameter elements; the spec then falls back to the plain plan.

The caps are a preference, not a verdict: where no scaling of the extents gets under them (a VGG or a
MobileNet reads 224x224 images at batch 1, a conv's spatial size written into ``get_inputs``), the smallest
case the reference runs on is checked anyway if it stays under ``FALLBACK_ELEMENT_CAP`` (slower, still the
same problem). Only a file whose every faithful case is larger than that is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from evaluators.recurrent_ops import whole_recurrences
from evaluators.shrink_scalings import KEEP_AT_MOST, SCALINGS, apply, scaled_values

ELEMENT_CAP = 100_000  # input elements of a test case: the interpreter checks it in seconds
OUTPUT_CAP = 4 * ELEMENT_CAP  # outputs may grow past the inputs (transposed convs, outer products)
FALLBACK_ELEMENT_CAP = 10 * ELEMENT_CAP  # the smallest faithful case, when none fits the cap: minutes, not hours
FALLBACK_OUTPUT_CAP = 4 * FALLBACK_ELEMENT_CAP
PARAM_CAP = 32_000_000  # parameter elements of a model checked at its production constructor args
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
                get_init_inputs: Callable[[], Any] | None, keep_init: bool = False) -> Shrink | None:
    """None when the production case is already small; else the first scaling that works, or ShrinkError.
    ``keep_init``: the constructor args stay the production ones (simulated targets, see above)."""
    if keep_init:
        params = _param_elements(reference_cls, get_init_inputs)
        if params is None:
            raise ShrinkError("the production model cannot be built on the meta device")
        if params > PARAM_CAP:
            raise ShrinkError(f"the production model has {params:,} parameter elements (cap {PARAM_CAP:,})")
    produced = _count_elements(get_inputs)
    if produced <= ELEMENT_CAP:
        return None
    found = size_constants(module)
    if not found:
        if _fallback_fits(module, None, reference_cls, get_inputs, get_init_inputs):
            return None  # checked at the production size: nothing to scale, and small enough to run
        raise ShrinkError(f"get_inputs() builds {produced:,} elements (cap {ELEMENT_CAP:,}) and the file has no "
                          "module-level size constants to scale down")
    constants, structural = split_extents(module, found, reference_cls, get_inputs, get_init_inputs)
    for name, value in list(structural.items()):  # one size under two names (num_classes, the logits' width;
        large = {v for v in _ints({name: value}) if v > KEEP_AT_MOST}  # groups = channels of a depthwise conv;
        if large <= _ints(constants):  # a bias shaped (channels, 1, 1)) shrinks as one
            constants[name] = structural.pop(name)
    if keep_init:  # what the constructor args read stays: the candidate may fix it (a norm's width)
        for name in _read_by_init(module, constants, get_init_inputs):
            structural[name] = constants.pop(name)
    floor = 2 if keep_init else 1
    kept = ", ".join(structural)
    if not constants:
        if _fallback_fits(module, None, reference_cls, get_inputs, get_init_inputs):
            return None
        raise ShrinkError(f"get_inputs() builds {produced:,} elements (cap {ELEMENT_CAP:,}) and its only size "
                          f"constants ({kept}) are structural; changing them would change the problem")
    small = {v for v in vars(module).values() if _is_int(v) and 0 < v <= KEEP_AT_MOST}  # groups, heads, strides
    fixed = _ints(structural)  # structural values: never scaled, divisors the extents they divide must keep
    fixed_divisors = fixed - _ints(constants)  # a value an extent shares is the extent's to scale
    reason = ""
    tried: list[dict[str, Any]] = []
    over: list[tuple[int, Shrink]] = []  # scalings the reference may run on, above the cap: the fallback
    for target in TARGETS:
        for scale in SCALINGS:
            mapping = scaled_values(constants, small | fixed_divisors, target, scale, fixed_divisors)
            values = {name: (old, apply(old, mapping)) for name, old in constants.items()}
            if values in tried or all(old == new for old, new in values.values()):
                continue
            tried.append(values)
            shrink = Shrink({name: pair for name, pair in values.items() if pair[0] != pair[1]})
            with rebound(module, shrink):
                elements = _count_elements(get_inputs)
            if elements > ELEMENT_CAP:
                over.append((elements, shrink))
                continue
            sizes = _meta_sizes(module, shrink, reference_cls, get_inputs, get_init_inputs)
            if sizes is not None and sizes[1] > OUTPUT_CAP:  # known without running it for real
                reason = reason or f"the reference's output has {sizes[1]:,} elements (cap {OUTPUT_CAP:,})"
                continue
            failure = _trial(module, shrink, reference_cls, get_inputs, get_init_inputs)
            if failure is None:
                return shrink
            reason = reason or failure  # the first failure, on the most faithful scaling, says most
    greedy = _greedy(module, constants, fixed, tried, reference_cls, get_inputs, get_init_inputs, floor)
    if greedy is not None and greedy[1]:
        failure = _trial(module, greedy[0], reference_cls, get_inputs, get_init_inputs)
        if failure is None:
            return greedy[0]
        reason = reason or failure
    elif greedy is not None:
        with rebound(module, greedy[0]):
            over.append((_count_elements(get_inputs), greedy[0]))
    for _, shrink in sorted(over, key=lambda pair: pair[0]):  # the smallest faithful case above the cap
        if _fallback_fits(module, shrink, reference_cls, get_inputs, get_init_inputs):
            return shrink
    apart = _greedy_by_name(module, constants, fixed, reference_cls, get_inputs, get_init_inputs, floor)
    if apart is not None:
        failure = _trial(module, apart, reference_cls, get_inputs, get_init_inputs)
        if failure is None:
            return apart
        reason = reason or failure
    alone = _one_at_a_time(module, constants, reference_cls, get_inputs, get_init_inputs, floor)
    if alone is not None:
        return alone
    names = ", ".join(constants)
    kept_note = f"; only its structural constants ({kept}) could, and changing them would change the problem" \
        if kept else ""
    raise ShrinkError(f"get_inputs() builds {produced:,} elements (cap {ELEMENT_CAP:,}) and no scaling of its extents "
                      f"({names}) runs the reference under the cap: {reason or 'all exceed it'}{kept_note}")


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


def _ints(constants: dict[str, Any]) -> set[int]:
    found: set[int] = set()
    for value in constants.values():
        found.update(value if isinstance(value, (tuple, list)) else [value])
    return found


def _greedy(module: ModuleType, constants: dict[str, Any], fixed: set[int], tried: list[dict[str, Any]],
            reference_cls: type[torch.nn.Module], get_inputs: Callable[[], Any],
            get_init_inputs: Callable[[], Any] | None, floor: int = 1) -> tuple[Shrink, bool] | None:
    """When no uniform target fits, extents shrink one size at a time: from the most faithful uniform scaling
    the reference runs on, halve whichever size removes most elements and keeps the case valid, until the
    inputs and outputs fit: (that scaling, True); else (the smallest valid one reached, False). A dilated
    conv whose effective kernel is 81 wide needs its width, not its batch or channels, kept near 64. Sizes are
    values (a value under two names shrinks as one); validity is checked on the meta device here (fast), and
    the caller runs the result for real."""
    production = sorted(v for v in _ints(constants) if v > KEEP_AT_MOST)
    starts = [{v: apply(v, _value_map(values)) for v in production} for values in tried]
    starts.append({v: v for v in production})  # every uniform scaling breaks it (an image size the model fixes)
    state = next((start for start in starts if _meta_sizes(module, _as_shrink(constants, start), reference_cls,
                                                            get_inputs, get_init_inputs) is not None), None)
    last = state
    while state is not None:
        sizes = _meta_sizes(module, _as_shrink(constants, state), reference_cls, get_inputs, get_init_inputs)
        if sizes is not None and sizes[0] <= ELEMENT_CAP and sizes[1] <= OUTPUT_CAP:
            return _as_shrink(constants, state), True
        last = state
        best: tuple[int, dict[int, int]] | None = None
        for value in production:  # a divisor kept where one divides it, else plain halving: the meta run decides
            for smaller in {_halve(value, state[value], fixed), max(1, state[value] // 2)} - {state[value]}:
                if smaller < floor:
                    continue
                halved = {**state, value: smaller}
                got = _meta_sizes(module, _as_shrink(constants, halved), reference_cls, get_inputs, get_init_inputs)
                if got is not None and (best is None or sum(got) < best[0]):
                    best = (sum(got), halved)
        state = best[1] if best is not None else None
    return None if last is None else (_as_shrink(constants, last), False)


def _greedy_by_name(module: ModuleType, constants: dict[str, Any], fixed: set[int],
                    reference_cls: type[torch.nn.Module], get_inputs: Callable[[], Any],
                    get_init_inputs: Callable[[], Any] | None, floor: int = 1) -> Shrink | None:
    """``_greedy`` with each name free to move alone, for sizes that are equal by coincidence: with batch,
    channels, height and width all 32, halving "32" everywhere also halves a width that a LayerNorm over
    the last dim fixes, so no shared scaling is valid. Here each step halves the one name that removes most
    elements and still runs on the meta device; the caller runs the result for real."""
    names = [name for name, value in constants.items() if _is_int(value) and value > KEEP_AT_MOST]

    def as_shrink(state: dict[str, int]) -> Shrink:
        return Shrink({n: (constants[n], state[n]) for n in names if state[n] != constants[n]})

    state = {name: constants[name] for name in names}
    while True:
        sizes = _meta_sizes(module, as_shrink(state), reference_cls, get_inputs, get_init_inputs)
        if sizes is None:
            return None
        if sizes[0] <= ELEMENT_CAP and sizes[1] <= OUTPUT_CAP:
            return as_shrink(state)
        best: tuple[int, dict[str, int]] | None = None
        for name in names:
            for smaller in {_halve(constants[name], state[name], fixed), max(1, state[name] // 2)} - {state[name]}:
                if smaller < floor:
                    continue
                moved = {**state, name: smaller}
                got = _meta_sizes(module, as_shrink(moved), reference_cls, get_inputs, get_init_inputs)
                if got is not None and (best is None or sum(got) < best[0]):
                    best = (sum(got), moved)
        if best is None:
            return None
        state = best[1]


def _one_at_a_time(module: ModuleType, constants: dict[str, Any], reference_cls: type[torch.nn.Module],
                   get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None,
                   floor: int = 1) -> Shrink | None:
    """The last resort, for a reference the meta device cannot run (so the greedy walk has nothing to go on):
    one extent at a time, its smallest power of two the reference runs on for real within the fallback caps;
    of those, the case with the fewest input elements (a Swin model fixes its image size, not its batch)."""
    found: list[tuple[int, Shrink]] = []
    for name, value in constants.items():
        if not _is_int(value):
            continue
        small = floor
        while small < value:
            shrink = Shrink({name: (value, small)})
            if _fallback_fits(module, shrink, reference_cls, get_inputs, get_init_inputs):
                with rebound(module, shrink):
                    found.append((_count_elements(get_inputs), shrink))
                break
            small *= 2
    return min(found, key=lambda pair: pair[0])[1] if found else None


def _value_map(values: dict[str, tuple[Any, Any]]) -> dict[int, int]:
    """production int -> test int, read off a uniform scaling's {name: (production, test)}."""
    mapping: dict[int, int] = {}
    for old, new in values.values():
        pairs = zip(old, new, strict=True) if isinstance(old, (tuple, list)) else [(old, new)]
        mapping.update(pairs)
    return mapping


def _as_shrink(constants: dict[str, Any], state: dict[int, int]) -> Shrink:
    values = {name: (old, apply(old, state)) for name, old in constants.items()}
    return Shrink({name: pair for name, pair in values.items() if pair[0] != pair[1]})


def _halve(production: int, value: int, fixed: set[int]) -> int:
    """Half of a test size, still a multiple of every fixed (structural) value that divides its production one."""
    step = 1
    for divisor in fixed:
        if 0 < divisor <= production and production % divisor == 0:
            step = math.lcm(step, divisor)
    return max(step, value // 2 // step * step) if value > step else value


def _meta_run(module: ModuleType, shrink: Shrink | None, reference_cls: type[torch.nn.Module],
              get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None,
              reference_rebound: bool = False) -> tuple[Any, Any]:
    """(inputs, the reference's outputs or None) of the case on the meta device: no memory, no time. None for
    the inputs when the rebinding breaks the file's own arithmetic; None for the outputs when the reference
    rejects the case (or has no meta kernel for some op). The reference is built and called with the constants
    restored, as the judge does, unless ``reference_rebound``."""
    try:
        with torch.random.fork_rng(devices=[]), torch.device("meta"), rebound(module, shrink):
            init = list(get_init_inputs()) if get_init_inputs else []
            inputs = get_inputs()
    except Exception:  # noqa: BLE001
        return None, None
    try:
        with torch.device("meta"), torch.no_grad(), whole_recurrences(), \
                rebound(module, shrink if reference_rebound else None):
            reference = reference_cls(*init).eval()
            return inputs, [reference(*case) for case in _case_list(inputs)]
    except Exception:  # noqa: BLE001
        return inputs, None


def _meta_sizes(module: ModuleType, shrink: Shrink, reference_cls: type[torch.nn.Module],
                get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None) -> tuple[int, int] | None:
    """(input elements, output elements) of the case on the meta device; None if the reference rejects it."""
    inputs, outputs = _meta_run(module, shrink, reference_cls, get_inputs, get_init_inputs)
    return None if outputs is None else (_elements(inputs), _elements(outputs))


def split_extents(module: ModuleType, constants: dict[str, Any], reference_cls: type[torch.nn.Module],
                  get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(extents, structural constants): an extent is a constant whose doubling doubles a dimension of the
    inputs or of the reference's output. Where the reference cannot run on the meta device, only the inputs'
    dimensions are looked at (a constant the inputs do not show is then kept: never a wrong problem)."""
    base_inputs, base_outputs = _meta_run(module, None, reference_cls, get_inputs, get_init_inputs)
    base = None if base_inputs is None else _dims(base_inputs) + _dims(base_outputs)
    extents, structural = {}, {}
    for name, value in constants.items():
        doubled = type(value)(2 * v for v in value) if isinstance(value, (tuple, list)) else 2 * value
        shrink = Shrink({name: (value, doubled)})
        inputs, outputs = _meta_run(module, shrink, reference_cls, get_inputs, get_init_inputs)
        probe = None if inputs is None else _dims(inputs) + _dims(outputs)
        grows = base is not None and probe is not None and _some_dim_doubles(base, probe)
        if grows and base_outputs is not None and outputs is None:
            grows = not _read_by_reference(module, shrink, reference_cls, get_inputs, get_init_inputs)
        (extents if grows else structural)[name] = value
    return extents, structural


def _read_by_reference(module: ModuleType, shrink: Shrink, reference_cls: type[torch.nn.Module],
                       get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None) -> bool:
    """Whether the reference reads the rebound constant itself, from the module's globals (a hidden state
    sized ``(batch_size, hidden)`` in its constructor): it rejects the case built as the judge builds it,
    constants restored, but runs it built under the rebinding. Such a constant keeps its production value."""
    return _meta_run(module, shrink, reference_cls, get_inputs, get_init_inputs, reference_rebound=True)[1] is not None


def _read_by_init(module: ModuleType, constants: dict[str, Any],
                  get_init_inputs: Callable[[], Any] | None) -> list[str]:
    """The constants whose doubling changes the constructor args (channels, features, groups, hidden sizes)."""
    if get_init_inputs is None:
        return []
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        base = repr(list(get_init_inputs()))
        read = []
        for name, value in constants.items():
            doubled = type(value)(2 * v for v in value) if isinstance(value, (tuple, list)) else 2 * value
            try:
                with rebound(module, Shrink({name: (value, doubled)})):
                    changed = repr(list(get_init_inputs())) != base
            except Exception:  # noqa: BLE001 - the file's own arithmetic breaks: the args depend on it
                changed = True
            if changed:
                read.append(name)
    return read


def _param_elements(reference_cls: type[torch.nn.Module], get_init_inputs: Callable[[], Any] | None) -> int | None:
    """Parameter and buffer elements of the production model, built on the meta device (None: it cannot be)."""
    try:
        with torch.random.fork_rng(devices=[]), torch.device("meta"), whole_recurrences():
            model = reference_cls(*(list(get_init_inputs()) if get_init_inputs else []))
    except Exception:  # noqa: BLE001
        return None
    return sum(t.numel() for t in [*model.parameters(), *model.buffers()])


def _dims(value: Any) -> list[int]:
    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, dict):
        return [d for v in value.values() for d in _dims(v)]
    if isinstance(value, (list, tuple)):
        return [d for v in value for d in _dims(v)]
    return []


def _some_dim_doubles(base: list[int], probe: list[int]) -> bool:
    return any(new == 2 * old and old > 0 for old, new in zip(base, probe, strict=False))


# --- checks ----------------------------------------------------------------------------------------------


def _fallback_fits(module: ModuleType, shrink: Shrink | None, reference_cls: type[torch.nn.Module],
                   get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None) -> bool:
    """Whether a case above the cap is still one to check: under the fallback caps (on the meta device first,
    then for real) and run by the reference."""
    inputs, outputs = _meta_run(module, shrink, reference_cls, get_inputs, get_init_inputs)
    if inputs is not None and _elements(inputs) > FALLBACK_ELEMENT_CAP:
        return False
    if outputs is not None and _elements(outputs) > FALLBACK_OUTPUT_CAP:
        return False
    with rebound(module, shrink):
        if _count_elements(get_inputs) > FALLBACK_ELEMENT_CAP:
            return False
    return _trial(module, shrink, reference_cls, get_inputs, get_init_inputs, FALLBACK_OUTPUT_CAP) is None


def _trial(module: ModuleType, shrink: Shrink | None, reference_cls: type[torch.nn.Module],
           get_inputs: Callable[[], Any], get_init_inputs: Callable[[], Any] | None,
           output_cap: int = OUTPUT_CAP) -> str | None:
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
    if produced > output_cap:
        return f"the reference's output has {produced:,} elements (cap {output_cap:,})"
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
