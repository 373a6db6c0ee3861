"""Simulated timing (docs/architecture.md §5): production cases are interpreted with program sampling and costed on
the target's record; the baseline is PyTorch eager modelled op by op on meta tensors (no real compute).

Every number this produces is an estimate and is labelled ``simulated``; use it to rank candidates on
hardware you do not have, not as a measurement.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from evaluators.candidate import build_pair, load_candidate_class
from evaluators.correctness import make_inputs
from evaluators.cost_model import Hardware, eager_estimate, estimate
from evaluators.guard import op_name
from evaluators.roofline import DTYPE_KEYS
from evaluators.sim_counter import MAX_SAMPLED_PROGRAMS, counting
from evaluators.spec import OperatorSpec
from evaluators.untouched import untouched_large

SIM_SEED = 0
_VIEW_OR_ALLOC = {"empty", "empty_like", "empty_strided", "view", "_unsafe_view", "reshape", "as_strided", "expand",
                  "permute", "transpose", "t", "squeeze", "unsqueeze", "select", "slice", "alias", "detach",
                  "lift_fresh", "split", "unbind", "unflatten", "flatten", "new_empty", "_reshape_alias"}


class _OpCoster(TorchDispatchMode):
    """Bytes each ATen op streams (inputs + outputs) and FLOPs of the matrix ops, from metadata only."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[tuple[str, float, float, str]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        name = op_name(func)
        if name in _VIEW_OR_ALLOC:
            return out
        tensors = [a for a in _flat(args) + _flat(out) if isinstance(a, torch.Tensor)]
        nbytes = float(sum(t.numel() * t.element_size() for t in tensors))
        dtype = next((DTYPE_KEYS.get(t.dtype, "fp32") for t in tensors if t.is_floating_point()), "fp32")
        self.ops.append((name, nbytes, _matrix_flops(name, args, out), dtype))
        return out


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _flat(item)]
    return [value]


def _matrix_flops(name: str, args: tuple, out: Any) -> float:
    if name in ("mm", "bmm", "addmm", "baddbmm", "matmul"):
        a = args[1] if name in ("addmm", "baddbmm") else args[0]
        return 2.0 * float(out.numel()) * a.shape[-1]
    if name == "convolution":
        weight = args[1]
        return 2.0 * float(out.numel()) * weight[0].numel()
    return 0.0


def eager_model_ms(spec: OperatorSpec, case: str, hw: Hardware) -> float:
    """Eager reference on meta tensors: every op costed as its own launch streaming its tensors.

    A reference whose shapes depend on its data (boolean masks, ``repeat_interleave`` without a size)
    cannot run on meta tensors; it runs for real on the CPU instead, costed the same way."""
    for device in ("meta", "cpu"):
        torch.manual_seed(SIM_SEED)
        inputs = spec.cases("prod", device)[case]
        reference = spec.reference_cls(*spec.init_args()).to(device).eval()
        coster = _OpCoster()
        try:
            with torch.no_grad(), coster:
                reference(*inputs)
            break
        except (NotImplementedError, RuntimeError):
            if device == "cpu":
                raise
    return eager_estimate(coster.ops, hw)


def simulate(spec: OperatorSpec, candidate_path: str, hardware: dict[str, Any]) -> dict[str, Any]:
    """{"cases": {name: {candidate_ms, eager_ms, launches: [...]}}, "hardware": name}."""
    hw = Hardware.from_dict(hardware)
    cls = load_candidate_class(candidate_path)
    with untouched_large():  # shapes and addresses matter here, not the values of big float tensors
        _, candidate = build_pair(spec, cls, SIM_SEED, "cpu")
        production = make_inputs(spec, "prod", "cpu", SIM_SEED)
    cases: dict[str, Any] = {}
    for name, inputs in production.items():
        limit = None if spec.simulate_all_programs else MAX_SAMPLED_PROGRAMS
        with torch.no_grad(), counting(limit) as launches, untouched_large():
            candidate(*inputs)
        model = estimate(launches, hw)
        cases[name] = {"candidate_ms": model["time_ms"], "eager_ms": eager_model_ms(spec, name, hw),
                       "launches": model["launches"]}
    return {"cases": cases, "hardware": hw.name}
