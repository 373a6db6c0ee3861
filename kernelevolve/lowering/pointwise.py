"""Pointwise fusion: a maximal chain of pointwise ops becomes one flat kernel (or another kernel's epilogue).

A pointwise node with exactly one user, itself pointwise, is computed inline in that user's kernel, so
each chain of single-use pointwise ops is one kernel that loads every outside input once and stores only
the chain's last value. Inputs are read through their strides after ``expand`` to the output's shape, so
broadcasts, permutes and slices cost nothing; a contiguous input of the output's shape is read flat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch.fx import Node

from kernelevolve.lowering.context import Context, compute_type, packet, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.pointwise_ops import COMPARISONS, OPS, lit

TENSOR_OPERANDS = {"fmod", "remainder", "atan2", "hypot", "bitwise_left_shift", "bitwise_right_shift", "__lshift__",
                   "__rshift__"}
CONSTANT_OPS = {"scalar_tensor", "full", "full_like", "zeros_like", "ones_like", "fill"}
# The rounding of a value computed in fp32 to a half dtype, kept in fp32 (bf16 through ``_rtne_bf16``: the CPU
# interpreter's bf16 cast truncates, where GPUs and ATen round to nearest even)
_HALF = {torch.bfloat16: "_rtne_bf16({})", torch.float16: "({}).to(tl.float16)"}


def is_pointwise(node: Node) -> bool:
    return node.op == "call_function" and packet(node) in OPS and isinstance(val(node), torch.Tensor)


def is_constant(node: Node) -> bool:
    return is_pointwise(node) and packet(node) in CONSTANT_OPS


def inline_set(graph: torch.fx.Graph) -> set[str]:
    """Pointwise nodes computed inside their pointwise users' kernel: a node with one user, a constant, or
    a node whose users all end in the same kernel (``|d|`` read twice by a Huber loss's ``where``), where it
    is computed once; materialising it would cost a write and a read of a whole tensor."""
    inline: set[str] = set()
    root: dict[str, str] = {}  # inlined node -> the node whose kernel computes it
    for node in reversed(list(graph.nodes)):  # users before producers
        if not is_pointwise(node):
            continue
        users = list(node.users)
        if not users or not all(is_pointwise(u) for u in users):
            continue
        ends = {root.get(u.name, u.name) for u in users}
        if len(users) == 1 or is_constant(node) or len(ends) == 1:
            inline.add(node.name)
            if len(ends) == 1:
                root[node.name] = ends.pop()
    return inline


@dataclass
class Group:
    root: Node
    members: list[Node] = field(default_factory=list)  # topological order, root last
    externals: list[Node] = field(default_factory=list)  # tensors read from outside the group
    scalars: list[Node] = field(default_factory=list)  # symbolic scalars passed at launch


def collect(root: Node, inline: set[str]) -> Group:
    group = Group(root)
    seen: set[str] = set()

    def visit(node: Node) -> None:
        if node.name in seen:
            return
        seen.add(node.name)
        for arg in _flat_args(node):
            if not isinstance(arg, Node):
                continue
            value = val(arg)
            if isinstance(value, torch.Tensor):
                if arg.name in inline and is_pointwise(arg):
                    visit(arg)
                elif arg not in group.externals:
                    group.externals.append(arg)
            elif arg not in group.scalars:
                group.scalars.append(arg)
        group.members.append(node)

    visit(root)
    return group


def _flat_args(node: Node) -> list:
    out = []
    for a in list(node.args) + list(node.kwargs.values()):
        out.extend(a if isinstance(a, (list, tuple)) else [a])
    return out


def _schema_args(node: Node) -> list[tuple[str, object]]:
    schema = node.target._schema  # type: ignore[union-attr]
    values = []
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            values.append((arg.name, node.args[i]))
        elif arg.name in node.kwargs:
            values.append((arg.name, node.kwargs[arg.name]))
        elif arg.has_default_value():
            values.append((arg.name, arg.default_value))
    return values


def body(group: Group, names: dict[str, str], block_shape: str) -> tuple[list[str], str]:
    """Kernel lines computing the group's members from ``names`` (external node / scalar -> kernel
    variable, already in its compute type) and the variable holding the root's value."""
    lines: list[str] = []
    exprs = dict(names)
    folded: dict[str, torch.Tensor] = {}
    for k, node in enumerate(group.members):
        name = packet(node)
        out = val(node)
        ct = compute_type(out.dtype)
        value = _fold(node, folded)
        if value is not None:  # an op on constants only (lerp's weight tests): its value, computed by ATen here
            folded[node.name] = value
            if node is not group.root:
                exprs[node.name] = lit(value.item())
                continue
            lines.append(f"v{k} = tl.full({block_shape}, {lit(value.item())}, {ct})")
            exprs[node.name] = f"v{k}"
            continue
        operand_dtypes = [val(a).dtype for _, a in _schema_args(node)
                          if isinstance(a, Node) and isinstance(val(a), torch.Tensor)]
        if name in COMPARISONS and name != "where":
            target = _promoted(node)
            cast_to = compute_type(target) if target is not None else None
        else:
            cast_to = ct
        args, kw = [], {}
        for arg_name, a in _schema_args(node):
            if isinstance(a, Node):
                text = exprs[a.name]
                value = val(a)
                if isinstance(value, torch.Tensor) and cast_to and not (name == "where" and arg_name == "condition"):
                    if compute_type(value.dtype) != cast_to:
                        text = f"{text}.to({cast_to})"
            elif isinstance(a, (bool, int, float)):
                text = lit(a)
                if name in TENSOR_OPERANDS:  # helpers that branch on their operands need tensors
                    text = f"tl.full({block_shape}, {text}, {cast_to})"
                if isinstance(a, (int, float)) and not isinstance(a, bool) and arg_name == "exponent":
                    kw["_scalar_exponent"] = a
            elif isinstance(a, (list, tuple)) or a is None or isinstance(a, (torch.dtype, torch.layout,
                                                                            torch.device, torch.memory_format)):
                text = None
            else:
                text = a  # strings: rounding modes, gelu's approximation
            args.append(text)
            kw[arg_name] = text
        kw["_float"] = out.dtype.is_floating_point
        kw["_dtype"] = out.dtype
        del operand_dtypes
        expr = OPS[name](args, kw)
        if name == "_to_copy" and node is not group.root and out.dtype in _HALF:
            expr = _HALF[out.dtype].format(expr)  # a cast to half inside the chain rounds, as ATen's would
        var = f"v{k}"
        if is_constant(node):
            if node is not group.root:
                exprs[node.name] = expr
                continue
            lines.append(f"{var} = tl.full({block_shape}, {expr}, {ct})")
        else:
            lines.append(f"{var} = ({expr}).to({ct})")
        exprs[node.name] = var
    return lines, exprs[group.root.name]


def _fold(node: Node, folded: dict[str, torch.Tensor]) -> torch.Tensor | None:
    """The value of a non-constant pointwise op whose every operand is a folded constant, computed by the op
    itself on 0-d tensors (constants are uniform, so 0-d stands for any shape); None otherwise. Why: such an op
    would otherwise be written over Python literals (``tl.abs(0.3)``, ``(0.3 - 1).to(...)``), which Triton
    cannot compute, and its value is known here, exactly as ATen computes it."""
    if is_constant(node):
        fill = _constant_fill(node)
        if fill is not None:
            folded[node.name] = torch.tensor(fill, dtype=val(node).dtype)
        return None
    operands = [a for a in _flat_args(node) if isinstance(a, Node)]
    if not operands or any(a.name not in folded for a in operands):
        return None
    args = [folded[a.name] if isinstance(a, Node) else a for a in node.args]
    kwargs = {k: folded[v.name] if isinstance(v, Node) else v for k, v in node.kwargs.items()}
    try:
        return node.target(*args, **kwargs).to(val(node).dtype)
    except Exception:  # noqa: BLE001 - not foldable here: written out as before
        return None


def _constant_fill(node: Node) -> float | int | bool | None:
    """A constant op's fill value where it is a plain number (not a size or another tensor)."""
    name = packet(node)
    fill = {"zeros_like": 0, "ones_like": 1}.get(name)
    if fill is None:
        args = dict(_schema_args(node))
        fill = args.get("self") if name == "scalar_tensor" else args.get("fill_value", args.get("value"))
    return fill if isinstance(fill, (bool, int, float)) else None


def _promoted(node: Node) -> torch.dtype | None:
    """The dtype a comparison compares in: ATen's promotion of its operands."""
    tensors, scalars = [], []
    for _, a in _schema_args(node):
        if isinstance(a, Node) and isinstance(val(a), torch.Tensor):
            tensors.append(val(a))
        elif isinstance(a, (int, float)) and not isinstance(a, bool):
            scalars.append(a)
    if not tensors:
        return None
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    if any(isinstance(s, float) for s in scalars) and not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    return dtype


def emit(ctx: Context, root: Node, inline: set[str],
         load: Callable[[int, Node], str] | None = None) -> None:
    """One flat kernel for the group rooted at ``root``; binds the root to its output buffer."""
    group = collect(root, inline)
    kname = ctx.fresh("_pointwise")
    tag = kname.lstrip("_").upper()
    block = ctx.tunable(f"{tag}_BLOCK", ctx.block(val(root).numel(), 16, 1024, 4096),
                        "elements per program; any power of two")
    warps = ctx.tunable(f"{tag}_WARPS", 4, "1, 2, 4, 8 or 16")
    out = val(root)
    rank = out.dim()
    names: dict[str, str] = {}
    params, launch, loads = ["out_ptr"], [], []
    for j, ext in enumerate(group.externals):
        params.append(f"a{j}_ptr")
        launch.append(ctx.tensor(ext))
    for j, s in enumerate(group.scalars):
        params.append(f"sc{j}")
        launch.append(ctx.sym(s))
        names[s.name] = f"sc{j}"
    params += ["n", *ctx.sizes([f"size{d}" for d in range(rank)])]
    strides = []
    for j in range(len(group.externals)):
        strides += [f"a{j}_st{d}" for d in range(rank)]
    params += strides + [f"A{j}_FLAT: tl.constexpr" for j in range(len(group.externals))] + ["BLOCK: tl.constexpr"]
    params += ctx.idx_param()
    idx = ["    rem = offs"]
    for d in reversed(range(rank)):
        if d == 0:
            idx.append("    i0 = rem")
        else:
            idx += [f"    i{d} = rem % size{d}", f"    rem = rem // size{d}"]
    for j, ext in enumerate(group.externals):
        ct = compute_type(val(ext).dtype)
        addr = " + ".join(f"i{d} * a{j}_st{d}" for d in range(rank)) or "0"
        loads += [f"    if A{j}_FLAT:",
                  f"        a{j} = tl.load(a{j}_ptr + offs, mask=mask, other=0).to({ct})",
                  "    else:",
                  f"        a{j} = tl.load(a{j}_ptr + {addr}, mask=mask, other=0).to({ct})"]
        names[ext.name] = f"a{j}"
    lines, result = body(group, names, "[BLOCK]")
    ops = ", ".join(sorted({packet(m) for m in group.members}))
    kernel = "\n".join([
        "@triton.jit",
        f"def {kname}({', '.join(params)}):",
        f"    # fused pointwise: {ops}",
        f"    offs = {ctx.pid(0)} * BLOCK + tl.arange(0, BLOCK)",
        "    mask = offs < n",
        *(idx if rank and group.externals else []),
        *loads,
        *[f"    {line}" for line in lines],
        f"    tl.store(out_ptr + offs, _cast_out({result}, out_ptr), mask=mask)",
    ])
    ctx.kernels.append(kernel)
    var = ctx.fresh("buf")
    ctx.empty(var, root)
    views = []
    for j, ext in enumerate(group.externals):
        views.append(f"e{j} = {ctx.tensor(ext)}.expand({var}.shape)")
    for v in views:
        ctx.line(v)
    args = [var, *launch, f"{var}.numel()"] + [f"{var}.shape[{d}]" for d in range(rank)]
    for j in range(len(group.externals)):
        args += [f"e{j}.stride({d})" for d in range(rank)]
    args += [f"A{j}_FLAT=_flat(e{j}, {var})" for j in range(len(group.externals))]
    args += [f"BLOCK={block}", *ctx.idx_launch([var, *(f"e{j}" for j in range(len(group.externals)))]),
             f"num_warps={warps}"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({var}.numel(), {block})),)]", args)
    ctx.bind(root, var)
    if not group.members:
        raise LoweringError("internal: empty pointwise group")
