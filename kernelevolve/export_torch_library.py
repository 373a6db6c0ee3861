"""``ke best --format torch-library``: the run's routes as a ``torch.library`` custom op, which is what a
model calls under ``torch.compile`` and in exported graphs.

``--out DIR`` becomes an importable package. Importing it registers ``kernelevolve::<op>``, whose arguments
are the reference's forward arguments followed by every parameter and buffer the reference holds: a custom op
must not close over tensors, so the module passes its own. The op's fake implementation runs the reference on
the fake inputs (no hand-written shapes), its gradient is the reference's (the kernels are forward-only), and
its real implementation routes each call by the same signature table as the dispatch export. The schema is
fixed here, from the spec's production cases on meta tensors.
"""

from __future__ import annotations

import inspect
import keyword
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from kernelevolve.errors import UserError
from kernelevolve.export_cpu import CPU_NOTE, with_cpu_fallback
from kernelevolve.export_plan import ExportPlan, route_listing, route_table, wrapped

SCALAR_TYPES = {bool: "bool", int: "SymInt", float: "float", str: "str"}

PACKAGE_TEMPLATE = '''"""torch.ops.kernelevolve.{name}, exported by `ke best` from run {run_id} (op {op} on {hw}).

{listing}

Use it (init_args: the reference's constructor arguments, {init_args!r}, the ones the kernels were checked
with; Module() uses them too):

    import {package}
    model = {package}.Module(*init_args)        # the reference's parameters, buffers and state_dict keys
    y = torch.compile(model, fullgraph=True)(x)   # runs torch.ops.kernelevolve.{name}(x, *{package}.op_tensors(model))

The op takes the forward arguments, then every parameter and buffer of the reference ({tensor_names}), so
nothing it reads is closed over; op_tensors(m) lists them from any module with the reference's names (the
reference itself included). Its fake implementation runs the reference on fake tensors; its gradient is the
reference's. The kernels run inside the op, which torch.compile treats as opaque.

{cpu_note}
"""

import importlib

import torch

from . import reference as _reference
from ._runtime import NodeModule, named_tensors, signature

OP = "kernelevolve::{name}"
SCHEMA = {schema!r}
ARGS = {n_args}  # forward arguments; the op's remaining arguments are TENSOR_NAMES, in order
TENSOR_NAMES = {tensor_names!r}
OUTPUT = {output!r}  # the reference returns a tensor, or a tuple or list of tensors (the op: Tensor[])
KERNEL_MODULES = {kernel_modules!r}  # node id -> its kernel module in this package
# input signature -> node id, or None for PyTorch; signatures not listed go to DEFAULT_NODE
ROUTES = {routes!r}
DEFAULT_NODE = {default_node!r}

Reference = getattr(_reference, "PytorchModel", None) or getattr(_reference, "Model")
INIT_ARGS = list(_reference.get_init_inputs()) if hasattr(_reference, "get_init_inputs") else []


def _kernel_class(module):
    return getattr(module, "TritonModel", None) or getattr(module, "ModelNew")


_reference_module = NodeModule(Reference, INIT_ARGS, {{}}, set(TENSOR_NAMES))
_kernels = {{node: NodeModule(_kernel_class(importlib.import_module("." + stem, __name__)), INIT_ARGS, {{}},
                             set(TENSOR_NAMES)) for node, stem in KERNEL_MODULES.items()}}
last_route = None  # "node N" or "pytorch": where the latest real call went


def op_tensors(module):
    """The op's tensor arguments, read by name from ``module`` (a Module or the reference itself)."""
    tensors = named_tensors(module)
    return [tensors[name] for name in TENSOR_NAMES]


def _split(args):
    return tuple(args[:ARGS]), dict(zip(TENSOR_NAMES, args[ARGS:]))


def _as_op_output(out, args):
    """A tensor, or a list for Tensor[]; a custom op's outputs may not share storage with its inputs."""
    inputs = {{a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor) and a.device.type != "meta"}}
    outs = [out] if OUTPUT == "tensor" else list(out)
    outs = [o.clone() if o.device.type != "meta" and o.untyped_storage().data_ptr() in inputs else o for o in outs]
    return outs[0] if OUTPUT == "tensor" else outs


def _impl(*args):
    global last_route
    inputs, tensors = _split(args)
    node = ROUTES.get(signature(inputs), DEFAULT_NODE)
    last_route = "pytorch" if node is None else f"node {{node}}"
    run = _reference_module if node is None else _kernels[node]
    return _as_op_output(run(tensors, inputs), args)


def _fake(*args):
    inputs, tensors = _split(args)
    outs = _reference_module(tensors, inputs)
    return outs.clone() if OUTPUT == "tensor" else [o.clone() for o in outs]


def _setup_context(ctx, inputs, output):
    ctx.kinds = [isinstance(a, torch.Tensor) for a in inputs]
    ctx.constants = [None if is_tensor else a for is_tensor, a in zip(ctx.kinds, inputs)]
    ctx.save_for_backward(*[a for a in inputs if isinstance(a, torch.Tensor)])


def _backward(ctx, grads):
    saved = iter(ctx.saved_tensors)
    inputs = [next(saved) if is_tensor else c for is_tensor, c in zip(ctx.kinds, ctx.constants)]
    wrt = [i for i, a in enumerate(inputs) if isinstance(a, torch.Tensor) and a.is_floating_point()]

    def reference(*differentiable):
        full = list(inputs)
        for i, t in zip(wrt, differentiable):
            full[i] = t
        forward, tensors = _split(full)
        return _reference_module(tensors, forward)

    outs, vjp = torch.func.vjp(reference, *[inputs[i] for i in wrt])
    if OUTPUT == "tensor":
        cotangent = grads if grads is not None else torch.zeros_like(outs)
    else:
        cotangent = type(outs)(g if g is not None else torch.zeros_like(o) for g, o in zip(grads, outs))
    result = [None] * len(inputs)
    for i, g in zip(wrt, vjp(cotangent)):
        result[i] = g
    return tuple(result)


custom_op = torch.library.custom_op(OP, _impl, mutates_args=(), schema=SCHEMA)
custom_op.register_fake(_fake)
custom_op.register_autograd(_backward, setup_context=_setup_context)


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:  # tensors among the init args
        return repr(a) == repr(b)


class Module(Reference):
    """The reference with its forward through torch.ops.kernelevolve.{name}. Same constructor (the op was built
    for INIT_ARGS, so other arguments are refused), parameters, buffers and state_dict keys."""

    def __init__(self, *args, **kwargs):
        if (args or kwargs) and not _same((list(args), kwargs), (INIT_ARGS, {{}})):
            raise ValueError(f"this export of {name} was built for init args {{INIT_ARGS!r}}, not {{list(args)!r}}"
                             f"{{' ' + repr(kwargs) if kwargs else ''}}; export a run of a spec with those")
        super().__init__(*INIT_ARGS)

    def forward(self, *args):
        out = torch.ops.kernelevolve.{name}(*args, *op_tensors(self))
        return out if OUTPUT in ("tensor", "list") else tuple(out)
'''


@dataclass
class OpInterface:
    """What the schema is built from: the forward arguments, the reference's tensors, the output's kind."""

    arg_names: list[str]
    arg_types: list[str]
    tensor_names: list[str]
    output: str  # "tensor", "tuple" or "list"
    init_args: list

    def schema(self) -> str:
        names = unique_identifiers(self.arg_names + [n.replace(".", "_") for n in self.tensor_names])
        types = self.arg_types + ["Tensor"] * len(self.tensor_names)
        returns = "Tensor" if self.output == "tensor" else "Tensor[]"
        return "(" + ", ".join(f"{t} {n}" for t, n in zip(types, names, strict=True)) + ") -> " + returns


def op_identifier(op: str) -> str:
    """``op`` (a built-in name or a spec file's path) as a valid operator name: the file's stem, lower case,
    every other character an underscore, never starting with a digit or equal to a Python keyword."""
    stem = re.sub(r"\.py$", "", op.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])
    name = re.sub(r"\W", "_", stem.lower(), flags=re.ASCII).strip("_") or "op"
    if name[0].isdigit():
        name = "op_" + name
    return name + "_" if keyword.iskeyword(name) else name


def unique_identifiers(names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        base = re.sub(r"\W", "_", name, flags=re.ASCII) or "arg"
        base = "arg_" + base if base[0].isdigit() or keyword.iskeyword(base) else base
        candidate, i = base, 1
        while candidate in out:
            candidate, i = f"{base}_{i}", i + 1
        out.append(candidate)
    return out


def op_interface(spec_path: Path) -> OpInterface:
    """Run the reference once on meta tensors (no data, no kernels) for the argument kinds, tensors, output."""
    import torch

    from evaluators.spec import load_spec
    from kernelevolve.export_runtime import named_tensors

    spec = load_spec(spec_path)
    try:
        with torch.device("meta"):
            reference = spec.reference_cls(*spec.init_args())
    except Exception as exc:
        raise UserError(f"torch-library export: the reference cannot be built on the meta device "
                        f"({type(exc).__name__}: {_first_line(exc)})") from None
    cases = spec.cases("prod", "meta")
    kinds = {name: [_arg_type(a, name) for a in args] for name, args in cases.items()}
    first_name, first = next(iter(cases.items()))
    for name, types in kinds.items():
        if types != kinds[first_name]:
            raise UserError(f"torch-library export: case {name} passes {types}, case {first_name} passes "
                            f"{kinds[first_name]}; one op schema needs one argument list")
    try:
        out = reference(*first)
    except Exception as exc:
        raise UserError(f"torch-library export: the reference does not run on meta tensors "
                        f"({type(exc).__name__}: {_first_line(exc)}), so it cannot "
                        f"be the op's fake implementation") from None
    if isinstance(out, torch.Tensor):
        output = "tensor"
    elif isinstance(out, (tuple, list)) and out and all(isinstance(o, torch.Tensor) for o in out):
        output = "tuple" if isinstance(out, tuple) else "list"
    else:
        raise UserError(f"torch-library export: the reference returns {type(out).__name__}; the op returns a "
                        f"tensor or a tuple or list of tensors")
    params = list(inspect.signature(reference.forward).parameters.values())
    plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    arg_names = [p.name for p in params] if plain and len(params) == len(first) else [
        f"arg{i}" for i in range(len(first))]
    return OpInterface(arg_names, kinds[first_name], list(named_tensors(reference)), output, spec.init_args())


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [""])[0]


def _arg_type(value: object, case: str) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return "Tensor"
    if type(value) in SCALAR_TYPES:
        return SCALAR_TYPES[type(value)]
    raise UserError(f"torch-library export: case {case} passes a {type(value).__name__}; an op argument is a "
                    f"tensor, bool, int, float or str")


def export_torch_library(out: Path, sources: dict[int, str], spec_path: Path, plan: ExportPlan, run_id: str,
                         op: str, hw: str) -> ExportPlan:
    """Write package ``out``: ``__init__.py`` (the op and ``Module``), ``_runtime.py``, ``reference.py`` (the
    spec the run used) and ``kernel_node<N>.py`` per node some route uses, the default node first."""
    if not out.name.isidentifier() or keyword.iskeyword(out.name):
        raise UserError(f"cannot write {out}: a torch-library export is a package imported by its folder's name, "
                        f"and {out.name!r} is not a Python identifier")
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot write {out}: it exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not _earlier_export(out):
        raise UserError(f"cannot write {out}: the folder holds files that are not an earlier torch-library export")
    interface = op_interface(spec_path)
    routes = route_table(plan, spec_path)
    name = op_identifier(op)
    out.mkdir(exist_ok=True)
    stems = {node: f"kernel_node{node}" for node in plan.kernel_nodes}
    for stale in out.glob("kernel_node*.py"):  # an earlier export's nodes that no route uses now
        if stale.stem not in stems.values():
            stale.unlink()
    for node, stem in stems.items():
        (out / f"{stem}.py").write_text(with_cpu_fallback(sources[node]), encoding="utf-8")
    (out / "reference.py").write_text(spec_path.read_text(encoding="utf-8"), encoding="utf-8")
    from kernelevolve import export_runtime

    shutil.copyfile(export_runtime.__file__, out / "_runtime.py")
    (out / "__init__.py").write_text(PACKAGE_TEMPLATE.format(
        run_id=run_id, op=op, hw=hw, name=name, package=out.name, listing=route_listing(plan),
        init_args=interface.init_args, schema=interface.schema(), n_args=len(interface.arg_names),
        tensor_names=interface.tensor_names, output=interface.output, kernel_modules=stems, routes=routes,
        default_node=plan.default_node, cpu_note=wrapped(CPU_NOTE)), encoding="utf-8")
    plan.files = [str(out / "__init__.py"), str(out / "_runtime.py"), str(out / "reference.py")] + [
        str(out / f"{stem}.py") for stem in stems.values()]
    plan.kernel_files = {node: str(out / f"{stem}.py") for node, stem in stems.items()}
    return plan



def _earlier_export(folder: Path) -> bool:
    init = folder / "__init__.py"
    return init.is_file() and "exported by `ke best`" in init.read_text(encoding="utf-8", errors="replace")
