"""The lowering driver: walk the traced graph once, emitting forward lines and kernels per node.

Placeholders become forward arguments or the module's own parameters; view ops stay torch views;
pointwise chains fuse into one kernel; every other op goes to its template family (``TEMPLATES``). Ops
no family lowers are collected first, so the error names all of them in one line.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.fx import Node

from kernelevolve.lowering import pointwise, prologue, row_fusion, views
from kernelevolve.lowering.context import Context, op_name, packet, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.trace import Traced

Emitter = Callable[[Context, Node], None]


def templates() -> dict[str, Emitter]:
    from kernelevolve.lowering import (
        bucketize,
        conv,
        index_put,
        matmul,
        misc,
        pool,
        recurrence,
        reduction,
        rows,
        scatter,
        sorting,
    )

    table: dict[str, Emitter] = {}
    for module in (reduction, rows, matmul, conv, pool, misc, sorting, recurrence, scatter, bucketize, index_put):
        table.update(module.EMITTERS)
    return table


def unsupported(traced: Traced, table: dict[str, Emitter]) -> list[str]:
    missing = []
    for node in traced.graph.nodes:
        if node.op != "call_function" or not _is_tensor_op(node):
            continue
        if pointwise.is_pointwise(node) or views.is_view(node) or packet(node) in table:
            continue
        name = op_name(node)
        if name not in missing:
            missing.append(name)
    return missing


def _is_tensor_op(node: Node) -> bool:
    value = val(node)
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, torch.Tensor) for v in value)
    return isinstance(value, torch.Tensor)


def lower_graph(traced: Traced, interpreter: bool = False, nvidia: bool = False,
                names: dict[str, int] | None = None) -> Context:
    """The lowered kernels and forward lines of ``traced``; ``names``: a name counter shared with the other
    drafts of one candidate (``variants.py``), so their kernels and tunables never collide."""
    table = templates()
    missing = unsupported(traced, table)
    if missing:
        raise LoweringError(f"no Triton lowering for {', '.join(missing)}")
    ctx = Context(traced, interpreter, nvidia)
    if names is not None:
        ctx.counter = names
    _bind_inputs(ctx)
    inline = pointwise.inline_set(traced.graph)
    ctx.inline = inline
    ctx.prologue = prologue.plan(traced.graph, inline)
    rows_fused = row_fusion.plan(ctx, traced.graph)  # root -> the reductions its kernel computes
    skipped = set().union(*(fusion.skipped for fusion in rows_fused.values()))
    for node in traced.graph.nodes:
        if node.op in ("placeholder", "get_attr") or node.name in ctx.done:
            continue
        if node.op == "output":
            _emit_output(ctx, node)
            continue
        if not _is_tensor_op(node):
            continue  # symbolic size arithmetic: printed where it is used
        if node.name in skipped:
            continue
        if node.name in rows_fused:
            row_fusion.emit(ctx, node, rows_fused[node.name])
        elif pointwise.is_pointwise(node):
            if node.name not in inline and node.name not in ctx.prologue:
                pointwise.emit(ctx, node, inline)
        elif views.is_view(node):
            views.emit(ctx, node)
        else:
            table[packet(node)](ctx, node)
    return ctx


def _bind_inputs(ctx: Context) -> None:
    traced = ctx.traced
    placeholders = {n.name: n for n in traced.graph.nodes if n.op == "placeholder"}
    device = None
    for placeholder, name in zip(traced.user_inputs, traced.arg_names or traced.user_inputs, strict=True):
        node = placeholders[placeholder]
        value = val(node)
        ctx.bind(node, name, name)
        if not isinstance(value, torch.Tensor):
            continue
        device = device or f"{name}.device"
        if ctx.ref_dtype is None and value.dtype.is_floating_point:
            ctx.ref_dtype = (name, value.dtype)
        _map_symbols(ctx, value, name)
    for name, (kind, target) in traced.state.items():
        getter = "get_parameter" if kind == "parameter" else "get_buffer"
        var = f"p_{ctx.fresh('')}"
        ctx.line(f"{var} = self.{getter}({target!r})")
        ctx.bind(placeholders[name], var)
        device = device or f"{var}.device"
        _map_symbols(ctx, val(placeholders[name]), var)
    for name in traced.constants:
        var = f"c_{ctx.fresh('')}"
        ctx.line(f"{var} = self.get_buffer({('const_' + name)!r})")
        ctx.bind(placeholders[name], var)
    if device is None:
        raise LoweringError("the reference has no tensor input or parameter to place outputs on")
    ctx.forward.insert(0, f"dev = {device}")


def _map_symbols(ctx: Context, value: torch.Tensor, var: str) -> None:
    """Each size symbol first seen as a dim of ``var`` is printed as ``var.shape[d]``."""
    for d, size in enumerate(value.shape):
        if isinstance(size, torch.SymInt):
            expr = size.node.expr
            if expr.is_Symbol and str(expr) not in ctx.symbols:
                ctx.symbols[str(expr)] = f"{var}.shape[{d}]"


def _emit_output(ctx: Context, node: Node) -> None:
    outs = node.args[0]
    names = []
    for out in outs:
        if not isinstance(out, Node) or not isinstance(val(out), torch.Tensor):
            raise LoweringError("no Triton lowering for a non-tensor output of the reference")
        var = ctx.tensor(out)
        if ctx.roots.get(var):  # a view of an input: the output must not alias it
            copied = ctx.fresh("out")
            ctx.line(f"{copied} = _copy({var})")
            var = copied
        names.append(var)
    ctx.line(f"return {names[0]}" if len(names) == 1 else f"return ({', '.join(names)})")
