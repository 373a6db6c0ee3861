"""Tracing a spec's reference into an FX graph of core ATen ops, with symbolic sizes.

``torch.export`` with every input dimension ``Dim.AUTO`` keeps sizes symbolic unless the reference pins
them (a ``Linear`` pins its input's last dim), so one trace serves every case of the spec; parameters and
buffers are lifted to graph inputs that the candidate reads from its own module, under the reference's
names. Core-ATen decompositions plus a few more (batch/group norm, var_mean) leave the ops the template
families lower.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelevolve.lowering.errors import LoweringError

aten = torch.ops.aten
# Ops that core ATen keeps but the lowering handles as their decompositions (pointwise + reductions).
EXTRA_DECOMPOSITIONS = (
    aten.var_mean.correction, aten.linalg_vector_norm.default, aten.native_dropout.default, aten.hardtanh.default,
    aten.elu.default, aten.embedding.default,
)


@dataclass
class Traced:
    """The decomposed graph and how its placeholders map onto the candidate's forward and state."""

    graph: torch.fx.Graph
    state: dict[str, tuple[str, str]] = field(default_factory=dict)  # placeholder -> (kind, reference name)
    constants: dict[str, torch.Tensor] = field(default_factory=dict)  # placeholder -> lifted tensor constant
    user_inputs: list[str] = field(default_factory=list)  # placeholders of forward's arguments, in order
    example: tuple[Any, ...] = ()  # the case it was traced on
    state_values: dict[str, torch.Tensor] = field(default_factory=dict)  # reference name -> tensor


def decomposition_table() -> dict:
    from torch._decomp import core_aten_decompositions
    from torch._decomp import decomposition_table as full

    table = core_aten_decompositions()
    for op in EXTRA_DECOMPOSITIONS:
        if op in full:
            table[op] = full[op]
    from kernelevolve.lowering.decompositions import TABLE

    table.update(TABLE)
    return table


def trace_spec(spec_path: str | Path) -> Traced:
    """Load the spec, build its reference from its init inputs and trace it on its first test case."""
    from evaluators.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_path)
    except SpecError as exc:
        raise LoweringError(str(exc)) from None
    torch.manual_seed(0)
    model = spec.reference_cls(*_init_args(spec, "test")).eval()
    cases = [tuple(c) for c in spec.cases("test").values()]
    return trace_module(model, _covering_case(cases))


def _init_args(spec: Any, which: str) -> list[Any]:
    """Constructor args of the ``which`` cases: a spec loader that shrinks test cases shrinks these too."""
    import inspect

    if "which" in inspect.signature(spec.init_args).parameters:
        return spec.init_args(which)
    return spec.init_args()


def _covering_case(cases: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """A case whose every size is the largest of that size over the cases (zeros where sizes differ).

    Export pins dims of size 0 or 1 to constants; tracing on the per-dim maximum keeps a dim symbolic
    whenever any case has it above 1. Cases of different structure: the one with fewest such dims."""
    first = cases[0]
    same = all(len(c) == len(first) and all(
        isinstance(a, torch.Tensor) == isinstance(b, torch.Tensor)
        and (not isinstance(a, torch.Tensor) or (a.dim() == b.dim() and a.dtype == b.dtype))
        and (isinstance(a, torch.Tensor) or a == b) for a, b in zip(c, first, strict=True)) for c in cases)
    if not same:
        return min(cases, key=_pinned_dims)
    out = []
    for i, a in enumerate(first):
        if not isinstance(a, torch.Tensor):
            out.append(a)
            continue
        shape = [max(c[i].shape[d] for c in cases) for d in range(a.dim())]
        out.append(a if list(a.shape) == shape else torch.zeros(shape, dtype=a.dtype))
    return tuple(out)


def _pinned_dims(case: tuple[Any, ...]) -> int:
    """Dims of size 0 or 1: export specializes them, so the trace case should have as few as possible."""
    return sum(1 for a in case if isinstance(a, torch.Tensor) for size in a.shape if size <= 1)


def trace_module(model: torch.nn.Module, case: tuple[Any, ...]) -> Traced:
    from torch.export import Dim, export

    dynamic = tuple({d: Dim.AUTO for d in range(a.dim())} if isinstance(a, torch.Tensor) and a.dim() else None
                    for a in case)
    quiet = logging.getLogger("torch._export")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            program = export(model, case, dynamic_shapes=dynamic, strict=False)
            program = program.run_decompositions(decomposition_table())
        except Exception as exc:  # noqa: BLE001 - any tracing failure is one line for the user
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise LoweringError(f"cannot trace the reference with torch.export: {type(exc).__name__}: "
                                f"{first[:200]}") from None
        finally:
            quiet.setLevel(level)
    traced = Traced(graph=program.graph_module.graph, example=case)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    from torch.export.graph_signature import InputKind

    for spec in program.graph_signature.input_specs:
        name = spec.arg.name
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            kind = "parameter" if spec.kind == InputKind.PARAMETER else "buffer"
            traced.state[name] = (kind, spec.target)
            traced.state_values[spec.target] = state[spec.target]
        elif spec.kind in (InputKind.CONSTANT_TENSOR,):
            traced.constants[name] = program.constants[spec.target]
        elif spec.kind == InputKind.USER_INPUT:
            traced.user_inputs.append(name)
        else:
            raise LoweringError(f"no Triton lowering for a graph input of kind {spec.kind.name}")
    return traced
