"""Tracing a spec's reference into an FX graph of core ATen ops, with symbolic sizes.

``torch.export`` with every input dimension ``Dim.AUTO`` keeps sizes symbolic unless the reference pins
them (a ``Linear`` pins its input's last dim), so one trace serves every case of the spec; parameters and
buffers are lifted to graph inputs that the candidate reads from its own module, under the reference's
names. Core-ATen decompositions plus a few more (batch/group norm, var_mean) leave the ops the template
families lower.
"""

from __future__ import annotations

import contextlib
import functools
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
    aten.linalg_vector_norm.default, aten.native_dropout.default, aten.hardtanh.default,
    aten.elu.default, aten.embedding.default, aten.upsample_nearest1d.vec, aten.upsample_nearest2d.vec,
    aten.upsample_nearest3d.vec, aten.upsample_bilinear2d.vec, aten.upsample_linear1d.vec,
    aten.upsample_trilinear3d.vec, aten.upsample_bicubic2d.vec,
)

# Ops that core ATen decomposes but the lowering keeps whole: a recurrence unrolled is one op per step, and
# logsumexp decomposed is four kernels where one row kernel reads the row once (rows.emit_logsumexp).
KEPT_WHOLE = (aten.lstm.input, aten.gru.input, aten.rnn_tanh.input, aten.rnn_relu.input, aten.logsumexp.default)


@dataclass
class Traced:
    """The decomposed graph and how its placeholders map onto the candidate's forward and state."""

    graph: torch.fx.Graph
    state: dict[str, tuple[str, str]] = field(default_factory=dict)  # placeholder -> (kind, reference name)
    constants: dict[str, torch.Tensor] = field(default_factory=dict)  # placeholder -> lifted tensor constant
    user_inputs: list[str] = field(default_factory=list)  # placeholders of forward's arguments, in order
    arg_names: list[str] = field(default_factory=list)  # the reference forward's names for them
    example: tuple[Any, ...] = ()  # the case it was traced on
    state_values: dict[str, torch.Tensor] = field(default_factory=dict)  # reference name -> tensor
    # repr(constructor args) -> the state's shapes under them (the traced args under ``init_key``)
    state_shapes: dict[str, dict[str, tuple[tuple[int, ...], str, bool]]] = field(default_factory=dict)
    init_key: str = ""
    production_sizes: dict[Any, int] = field(default_factory=dict)  # size symbol -> production value


def decomposition_table() -> dict:
    from torch._decomp import core_aten_decompositions
    from torch._decomp import decomposition_table as full

    table = core_aten_decompositions()
    for op in EXTRA_DECOMPOSITIONS:
        if op in full:
            table[op] = full[op]
    from kernelevolve.lowering.decompositions import TABLE

    table.update(TABLE)
    for op in KEPT_WHOLE:  # lowered whole (recurrence.py, rows.emit_logsumexp)
        table.pop(op, None)
    return table


def trace_spec(spec_path: str | Path, production_sizes: bool = False, which: str = "test",
               symbolic: bool = False) -> Traced:
    """Load the spec, build its reference from the ``which`` cases' constructor args and trace it on a case
    covering those cases; ``production_sizes`` also records the sizes of its production case (read on
    the meta device, so nothing is allocated) for choosing block sizes.

    ``which`` is the case set the target checks candidates on: ``test`` on the CPU interpreter (shrunk copies
    of a KernelBench file's inputs), ``sim`` on the simulated targets (shrunk, constructor args kept where it
    can), ``prod`` on a GPU. A size the trace
    fixes (``LayerNorm(hidden)`` pins the row length to its constructor arg) is then fixed at the value the
    checks and timings use. Sizes stay symbolic unless the traced case is the only one the draft will run
    (``_fixed_sizes``)."""
    spec, model, test_args = _load_reference(spec_path, which)
    cases = [tuple(c) for c in spec.cases(which).values()]
    return _trace_group(spec, model, test_args, cases, production_sizes, which, symbolic)


def trace_variants(spec_path: str | Path, production_sizes: bool = False, which: str = "test",
                   symbolic: bool = False) -> list[tuple[tuple[Any, ...], Traced]]:
    """``trace_spec`` once per input structure (``structure``) among the cases the draft will run: the
    ``which`` cases, and where ``production_sizes`` the production cases too (built on the meta device).

    Why: one trace fixes each tensor's dtype and rank and which dims are 0 or 1 (a broadcast), so a spec
    whose cases differ in those (an ATen op checked on fp16 rows, int32 vectors and empty tensors) needs one
    draft per structure; ``lowering.variants`` joins them into one candidate that dispatches on it. Each draft
    keeps its sizes symbolic, so it serves any sizes of its structure, not only its one test case's. An empty
    case that will not trace (export cannot split an empty batch into groups) is traced on a stand-in with
    its empty dims at 2: the kernels mask every dim, so that draft serves the empty tensor. A spec whose cases
    share one structure gets exactly ``trace_spec``'s single trace."""
    spec, model, test_args = _load_reference(spec_path, which)
    groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for case in (tuple(c) for c in spec.cases(which).values()):
        groups.setdefault(structure(case), []).append(case)
    checked = set(groups)
    if production_sizes and which != "prod":
        for case in _production_cases(spec):
            groups.setdefault(structure(case), [case])  # a structure only the timings or the simulator run
    general = symbolic or len(groups) > 1  # a draft per structure still serves any sizes of its structure
    traces = []
    for key, cases in groups.items():
        for attempt in (cases, _without_empty_dims(cases)):
            try:
                traces.append((key, _trace_group(spec, model, test_args, attempt, production_sizes, which, general)))
                break
            except LoweringError as exc:
                error = exc
        else:
            if key in checked:
                raise error
            # a production-only structure that will not trace on the meta device: no draft serves it
    return traces


def _without_empty_dims(cases: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The cases with every dim of size 0 at 2 (zeros: valid indices too); the same where none is empty."""
    def widen(a: Any) -> Any:
        if isinstance(a, torch.Tensor) and 0 in a.shape:
            return torch.zeros([2 if s == 0 else s for s in a.shape], dtype=a.dtype, device=a.device)
        return a

    return [tuple(widen(a) for a in case) for case in cases]


def structure(case: tuple[Any, ...]) -> tuple[Any, ...]:
    """What a trace fixes about a case: each tensor's dtype and its sizes where they are 0 or 1 (export
    specializes those; -1 stands for any other), and every other argument's value. ``variants.STRUCTURE``
    computes the same key at run time."""
    return tuple((str(a.dtype), tuple(int(s) if s <= 1 else -1 for s in a.shape)) if isinstance(a, torch.Tensor)
                 else repr(a) for a in case)


def _production_cases(spec: Any) -> list[tuple[Any, ...]]:
    """The production cases on the meta device (nothing allocated); none where they cannot be built so."""
    try:
        return [tuple(c) for c in spec.cases("prod", device="meta").values()]
    except Exception:  # noqa: BLE001 - optional: the draft then serves the checked structures only
        return []


def _load_reference(spec_path: str | Path, which: str) -> tuple[Any, torch.nn.Module, list[Any]]:
    """The spec, its reference built (seeded) from the ``which`` cases' constructor args, and those args."""
    from evaluators.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_path)
    except SpecError as exc:
        raise LoweringError(str(exc)) from None
    torch.manual_seed(0)
    test_args = _init_args(spec, which)
    return spec, spec.reference_cls(*test_args).eval(), test_args


def _trace_group(spec: Any, model: torch.nn.Module, test_args: list[Any], cases: list[tuple[Any, ...]],
                 production_sizes: bool, which: str, symbolic: bool) -> Traced:
    """The reference traced on a case covering ``cases``, with its state shapes and production sizes."""
    fixed = _fixed_sizes(cases, production_sizes, which, symbolic)
    traced = trace_module(model, _covering_case(cases), static=fixed)
    traced.init_key = repr(tuple(test_args))
    traced.state_shapes[traced.init_key] = _shapes(model, traced)
    prod_args = _init_args(spec, "prod")
    for other in (prod_args, _test_init_args(spec, which)):
        if other is not None and list(other) != list(test_args) and repr(tuple(other)) not in traced.state_shapes:
            add_state_shapes(traced, spec.reference_cls, other)
    traced.arg_names = _forward_names(model, len(traced.user_inputs)) or list(traced.user_inputs)
    if production_sizes and not fixed:  # a fixed-size trace has no symbols to give production values
        _record_production_sizes(traced, spec, prod_args)
    return traced


def _fixed_sizes(cases: list[tuple[Any, ...]], production_sizes: bool, which: str, symbolic: bool) -> bool:
    """Whether to trace at fixed sizes: when the traced case is the only one the draft will ever run (a single
    checked case, and no production shapes to simulate on besides it). Symbolic sizes buy nothing then, and
    export's guard solving is slow through convolutions: a ResNet-101 took over 10 min symbolic against 14 s
    fixed, a VGG-16 40 s against about 1 s. The draft's pin guard refuses any other size in one line.
    ``symbolic`` keeps every size symbolic regardless (a GPU draft to be run on the interpreter's test cases)."""
    return not symbolic and len(cases) == 1 and (which == "prod" or not production_sizes)


def _record_production_sizes(traced: Traced, spec: Any, prod_args: list[Any]) -> None:
    """symbol -> its value in the production case: each input dim and parameter dim that is a bare symbol."""
    try:
        with torch.device("meta"):
            raw = spec.get_inputs()
    except Exception:  # noqa: BLE001 - optional: block sizes then follow the traced case
        return
    case = list(raw) if isinstance(raw, (list, tuple)) and not (raw and isinstance(raw[0], (list, tuple))) else None
    if case is None or len(case) != len(traced.user_inputs):
        return
    placeholders = {n.name: n for n in traced.graph.nodes if n.op == "placeholder"}
    pairs = [(placeholders[name], value) for name, value in zip(traced.user_inputs, case, strict=True)]
    shapes = traced.state_shapes.get(repr(tuple(prod_args)), {})
    for name, (_kind, target) in traced.state.items():
        if target in shapes:
            pairs.append((placeholders[name], torch.empty(shapes[target][0], device="meta")))
    for node, value in pairs:
        fake = node.meta.get("val")
        if not isinstance(fake, torch.Tensor) or not isinstance(value, torch.Tensor) or fake.dim() != value.dim():
            continue
        for size, prod in zip(fake.shape, value.shape, strict=True):
            if isinstance(size, torch.SymInt) and size.node.expr.is_Symbol:
                traced.production_sizes.setdefault(size.node.expr, int(prod))


def _forward_names(model: torch.nn.Module, count: int) -> list[str]:
    """The reference forward's positional parameter names when there are exactly ``count`` of them."""
    import inspect
    import keyword

    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    ok = len(names) == count and len(set(names)) == count and all(
        n.isidentifier() and not keyword.iskeyword(n) and n not in ("self", "dev") and not n.startswith(("p_", "c_"))
        for n in names)
    return names if ok else []


def add_state_shapes(traced: Traced, cls: type[torch.nn.Module], args: list[Any]) -> None:
    """Record the parameter shapes ``cls(*args)`` has (built on the meta device, so production-sized
    constructor args cost no memory); a reference that cannot be built there keeps the traced shapes only."""
    try:
        with torch.device("meta"):
            model = cls(*args)
        shapes = _shapes(model, traced)  # KeyError where other args build other layers (a shortcut conv)
    except Exception:  # noqa: BLE001 - optional: the candidate then knows the traced args only
        return
    traced.state_shapes[repr(tuple(args))] = shapes


def _shapes(model: torch.nn.Module, traced: Traced) -> dict[str, tuple[tuple[int, ...], str, bool]]:
    """name -> (shape, dtype, is parameter) of the state the graph reads, as ``model`` has it (a plain tensor
    attribute the trace made a buffer included)."""
    from kernelevolve.lowering.tensor_attrs import tensor_attrs

    state = {**tensor_attrs(model), **dict(model.named_parameters()), **dict(model.named_buffers())}
    return {target: (tuple(state[target].shape), str(state[target].dtype), kind == "parameter")
            for kind, target in traced.state.values()}


def _init_args(spec: Any, which: str) -> list[Any]:
    """Constructor args of the ``which`` cases: a spec loader that shrinks test cases shrinks these too."""
    import inspect

    if "which" in inspect.signature(spec.init_args).parameters:
        return spec.init_args(which)
    return spec.init_args()


def _test_init_args(spec: Any, which: str) -> list[Any] | None:
    """The test cases' constructor args, when traced on production: None where the spec has no test case (it
    cannot be shrunk without changing a structural constant), since a production trace does not need one."""
    if which != "prod":
        return _init_args(spec, which)
    from evaluators.spec import SpecError

    try:
        return _init_args(spec, "test")
    except SpecError:
        return None


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
        out.append(a if list(a.shape) == shape else torch.zeros(shape, dtype=a.dtype, device=a.device))
    return tuple(out)


def _pinned_dims(case: tuple[Any, ...]) -> int:
    """Dims of size 0 or 1: export specializes them, so the trace case should have as few as possible."""
    return sum(1 for a in case if isinstance(a, torch.Tensor) for size in a.shape if size <= 1)


class _Stateless(torch.nn.Module):
    """The reference with its parameters and buffers as arguments, so export makes their sizes symbolic
    too: a candidate then serves constructor args other than the traced ones (a shrunk test case's).
    ``finals``: buffers whose values after forward are returned too (lifted tensor attributes)."""

    def __init__(self, inner: torch.nn.Module, names: list[str], finals: list[str] | None = None) -> None:
        super().__init__()
        from kernelevolve.lowering.tensor_attrs import WithFinals

        # not a submodule: its tensors must not be lifted
        object.__setattr__(self, "_inner", WithFinals(inner, finals) if finals else inner)
        self._names = [f"inner.{n}" for n in names] if finals else names

    def forward(self, state: list[torch.Tensor], inputs: list[Any]) -> Any:
        from torch.func import functional_call

        return functional_call(self._inner, dict(zip(self._names, state, strict=True)), tuple(inputs))


def _dims(a: Any, static: bool = False) -> dict | None:
    """Every dim left to export to keep symbolic (``Dim.AUTO``), or none (``static``: the traced sizes)."""
    from torch.export import Dim

    if static or not (isinstance(a, torch.Tensor) and a.dim()):
        return None
    return {d: Dim.AUTO for d in range(a.dim())}


def _export(module: torch.nn.Module, args: tuple, dynamic: Any) -> Any:
    from torch.export import export

    from evaluators.recurrent_ops import whole_recurrences
    from kernelevolve.lowering import composite_ops

    quiet = logging.getLogger("torch._export")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), whole_recurrences():
            warnings.simplefilter("ignore")
            program = export(module, args, dynamic_shapes=dynamic, strict=False)
            if _already_lowerable(program):
                return program
            composite_ops.install()
            return program.run_decompositions(decomposition_table())
    finally:
        quiet.setLevel(level)


def _already_lowerable(program: Any) -> bool:
    """Whether the exported graph holds only functional ATen ops that no decomposition rewrites, so that
    ``run_decompositions`` would return the same graph. Why: it costs about a second per trace (it collects
    every composite op of every namespace each time), which is most of the time a small reference takes to
    lower, and a spec lowered per input structure is traced several times."""
    import operator

    table = _decompositions()
    for node in program.graph_module.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        target = node.target
        if not isinstance(target, torch._ops.OpOverload) or target in table or target._schema.is_mutable:
            return False
        if torch._C._dispatch_has_kernel_for_dispatch_key(target.name(), "CompositeImplicitAutograd"):
            return False
    return True


@functools.cache
def _decompositions() -> frozenset:
    """The ops ``decomposition_table`` rewrites (a set, built once per process)."""
    return frozenset(decomposition_table())


def trace_module(model: torch.nn.Module, case: tuple[Any, ...], static: bool = False) -> Traced:
    """Export with symbolic parameter sizes; where the reference needs them concrete, with fixed ones.
    ``static``: every size fixed at the traced one (the draft's pin guard then refuses any other size).

    Plain tensor attributes are traced as buffers (``tensor_attrs``): export refuses a mutated constant. Those
    the forward leaves alone are then traced again as before, as constants the draft embeds: the judge copies
    a reference's state into the candidate through ``state_dict``, which holds no plain attribute."""
    from kernelevolve.lowering.tensor_attrs import as_buffers, tensor_attrs

    attrs = tensor_attrs(model)
    if not attrs:
        return _trace(model, case, static, [])[0]
    with as_buffers(model, attrs):
        traced, changed = _trace(model, case, static, list(attrs))
    read = {target for _kind, target in traced.state.values()}
    if not (read & set(attrs)) - changed:
        return traced
    kept = {name: value for name, value in attrs.items() if name in changed}
    with as_buffers(model, kept):
        return _trace(model, case, static, list(kept))[0]


def _trace(model: torch.nn.Module, case: tuple[Any, ...], static: bool, attrs: list[str]) -> tuple[Traced, set[str]]:
    """The traced graph, cut to the reference's own outputs, and the state its forward mutates or (of the
    buffers ``attrs``) reassigns. LoweringError where an output reads state the forward then overwrites."""
    from torch.export.graph_signature import InputKind

    kinds = {**{n: "parameter" for n, _ in model.named_parameters()}, **{n: "buffer" for n, _ in model.named_buffers()}}
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    names = list(kinds)
    values = [state[n] for n in names]
    finals = [n for n in names if n in attrs]
    try:
        program = _export(_Stateless(model, names, finals), (values, list(case)),
                          ([_dims(v, static) for v in values], [_dims(a, static) for a in case]))
        stateless = True
    except Exception:  # noqa: BLE001 - retried with parameters as fixed-size module state
        try:
            program = _export(model, case, tuple(_dims(a, static) for a in case))
        except Exception as exc:  # noqa: BLE001 - any tracing failure is one line for the user
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise LoweringError(f"cannot trace the reference with torch.export: {type(exc).__name__}: "
                                f"{first[:200]}") from None
        stateless = False
    traced = Traced(graph=program.graph_module.graph, example=case)
    changed = _user_outputs_only(program, names if stateless else [], finals if stateless else [])
    used = {n.name for n in traced.graph.nodes if n.op == "placeholder" and n.users}
    for spec in program.graph_signature.input_specs:
        name = spec.arg.name
        if stateless and spec.kind == InputKind.USER_INPUT and name.startswith("state_"):
            target = names[int(name.split("_")[1])]
            if name in used:
                traced.state[name] = (kinds[target], target)
                traced.state_values[target] = state[target]
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            if name in used:
                traced.state[name] = ("parameter" if spec.kind == InputKind.PARAMETER else "buffer", spec.target)
                traced.state_values[spec.target] = state[spec.target]
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            traced.constants[name] = program.constants[spec.target]
        elif spec.kind == InputKind.USER_INPUT:
            traced.user_inputs.append(name)
        else:
            raise LoweringError(f"no Triton lowering for a graph input of kind {spec.kind.name}")
    return traced, changed


def _user_outputs_only(program: Any, names: list[str], finals: list[str]) -> set[str]:
    """Cut the graph's outputs to the reference's own (export adds the new values of mutated state, and a
    stateless trace the ``finals``) and return the state names the forward changes; LoweringError where an
    output reads a changed state's value from before the call (``tensor_attrs.refuse_carried_state``)."""
    from torch.export.graph_signature import InputKind, OutputKind

    from kernelevolve.lowering.tensor_attrs import refuse_carried_state, user_outputs

    graph = program.graph_module.graph
    specs = program.graph_signature.output_specs
    user = [i for i, spec in enumerate(specs) if spec.kind == OutputKind.USER_OUTPUT]
    if len(user) == len(specs) and not finals:
        return set()
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    inputs = {}  # state name -> its placeholder
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.BUFFER:
            inputs[spec.target] = placeholders[spec.arg.name]
        elif names and spec.kind == InputKind.USER_INPUT and spec.arg.name.startswith("state_"):
            inputs[names[int(spec.arg.name.split("_")[1])]] = placeholders[spec.arg.name]
    changed = {}
    for spec in specs:
        if spec.kind == OutputKind.BUFFER_MUTATION:
            changed[spec.target] = inputs[spec.target]
        elif spec.kind == OutputKind.USER_INPUT_MUTATION and names and spec.target.startswith("state_"):
            target = names[int(spec.target.split("_")[1])]
            changed[target] = inputs[target]
    outs = list(next(n for n in graph.nodes if n.op == "output").args[0])
    last = user[len(user) - len(finals):] if finals else []
    for name, index in zip(finals, last, strict=True):
        if outs[index] is not inputs.get(name):
            changed[name] = inputs[name]
    user_outputs(graph, [i for i in user if i not in last])
    refuse_carried_state(graph, changed)
    return set(changed)
