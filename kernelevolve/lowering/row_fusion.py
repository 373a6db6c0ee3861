"""Row fusion: reductions over a row and the pointwise chain that reads them back become one kernel.

A norm traced into core ATen is reductions over some dims (``mean`` and ``var`` of an instance norm, the
``mean`` of ``x**2`` of an RMS norm, ``amin`` and ``amax`` of a min-max scaling) whose keepdim results a
pointwise chain broadcasts back over the same rows (``(x - mean) * rsqrt(var + eps)``). Lowered apart, that
is a kernel per reduction and one for the chain: the row is read three or four times and every launch pays
its latency. On NVIDIA targets, when the rows fit one tile (``rows.ONE_TILE_MAX`` elements), one program
loads BLOCK_O whole rows once, reduces them in registers (a var in two passes over the registers, so as
exact as the unfused kernel), evaluates the chain on the same tile and stores it: one read and one write,
as TorchInductor's persistent reductions do. BLOCK_R is the row length rounded up at launch, not a tunable,
so the search can never split a row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch.fx import Node

from kernelevolve.lowering import pointwise
from kernelevolve.lowering.context import Context, compute_type, packet, val
from kernelevolve.lowering.dots import SMS
from kernelevolve.lowering.indexing import decompose, norm_dims, schema_args
from kernelevolve.lowering.prologue import Source
from kernelevolve.lowering.reduction import FINISH, KINDS, PARTIAL, TILE, _correction
from kernelevolve.lowering.rows import ONE_TILE_MAX, _one_tile_defaults

FUSABLE = {"sum", "mean", "amax", "amin", "var"}  # reductions whose result is one value per row


def _reduction(node: Node) -> tuple[Node, list[int]] | None:
    """(input, reduced dims) of a keepdim float32 reduction this fusion can compute, else None."""
    if node.op != "call_function" or packet(node) not in FUSABLE or not isinstance(val(node), torch.Tensor):
        return None
    x = node.args[0]
    if not isinstance(x, Node) or not isinstance(val(x), torch.Tensor) or val(x).dtype != torch.float32:
        return None
    if val(node).dtype != torch.float32 or val(node).dim() != val(x).dim():  # keepdim only
        return None
    return x, norm_dims(schema_args(node).get("dim"), val(x).dim())


@dataclass
class Fusion:
    """What one row kernel computes besides its pointwise chain: the reductions, and reduced-shape chains
    over them that the chain reads through an ``expand`` (an L2 norm's ``clamp(sum ** 0.5)``)."""

    reds: list[Node]
    absorbed: list[tuple[Node, Node]] = field(default_factory=list)  # (expand view, reduced-shape chain root)

    @property
    def skipped(self) -> set[str]:
        """Nodes the kernel computes, so the lowering loop emits nothing for them."""
        return {n.name for n in self.reds} | {n.name for pair in self.absorbed for n in pair}


def _absorbable(ctx: Context, e: Node) -> tuple[Node, list[Node]] | None:
    """(chain root, its reductions) when ``e`` expands a reduced-shape pointwise chain read only there whose
    inputs are all fusable reductions, else None."""
    if e.op != "call_function" or packet(e) != "expand" or not isinstance(e.args[0], Node):
        return None
    f = e.args[0]
    if not pointwise.is_pointwise(f) or f.name in ctx.inline or f.name in ctx.prologue or list(f.users) != [e]:
        return None
    chain = pointwise.collect(f, ctx.inline)
    if chain.scalars or not chain.externals or any(_reduction(r) is None for r in chain.externals):
        return None
    return f, chain.externals


def plan(ctx: Context, graph: torch.fx.Graph) -> dict[str, Fusion]:
    """Pointwise group root -> what its row kernel computes besides the chain (NVIDIA targets only)."""
    if not ctx.nvidia:
        return {}
    fused: dict[str, Fusion] = {}
    for node in graph.nodes:
        if not pointwise.is_pointwise(node) or node.name in ctx.inline or node.name in ctx.prologue:
            continue
        group = pointwise.collect(node, ctx.inline)
        fusion, readers = Fusion([]), {m.name for m in group.members}
        for e in group.externals:
            if _reduction(e) is not None:
                fusion.reds.append(e)
            elif (found := _absorbable(ctx, e)) is not None and set(u.name for u in e.users) <= readers:
                fusion.absorbed.append((e, found[0]))
                fusion.reds += [r for r in found[1] if r not in fusion.reds]
                readers |= {m.name for m in pointwise.collect(found[0], ctx.inline).members}
        if not fusion.reds:
            continue
        x, dims = _reduction(fusion.reds[0])
        if any(_reduction(r) != (x, dims) for r in fusion.reds):
            continue
        if any(u.name not in readers for r in fusion.reds for u in r.users):
            continue  # a reduction also read elsewhere stays a kernel of its own
        if str(val(node).shape) != str(val(x).shape) or len(dims) == val(x).dim():
            continue
        n_red = math.prod(ctx.hint(val(x).shape[d]) for d in dims)
        n_rows = math.prod(ctx.hint(s) for s in val(x).shape) // max(1, n_red)
        if n_red > ONE_TILE_MAX and n_rows < SMS:
            continue  # few long rows: one program a row would leave most SMs idle
        fused[node.name] = fusion
        if _recomputable(ctx, x, readers | {r.name for r in fusion.reds}):
            ctx.prologue.add(x.name)
    return fused


def _recomputable(ctx: Context, x: Node, readers: set[str]) -> bool:
    """Whether the reductions' input is a pointwise chain read only inside this kernel (a softmax backward's
    ``grad * out``, summed and read again by the chain): the kernel then computes it at its loads and the chain
    reads the loaded tile, so it is never written to memory and read back."""
    return (pointwise.is_pointwise(x) and not pointwise.is_constant(x) and x.name not in ctx.inline
            and x.name not in ctx.prologue and all(u.name in readers for u in x.users))


def emit(ctx: Context, root: Node, fusion: Fusion) -> None:
    """One kernel: load rows of the reductions' input, reduce, evaluate ``root``'s chain, store."""
    reds = fusion.reds
    x = reds[0].args[0]
    xv = val(x)
    red = norm_dims(schema_args(reds[0]).get("dim"), xv.dim())
    kept = [d for d in range(xv.dim()) if d not in red]
    group = pointwise.collect(root, ctx.inline)
    absorbed = {e.name for e, _ in fusion.absorbed}
    others = [e for e in group.externals if e not in reds and e.name not in absorbed and e.name not in ctx.prologue]
    kname = ctx.fresh("_rowfuse")
    tag = kname.lstrip("_").upper()
    n_rows = math.prod(ctx.hint(xv.shape[d]) for d in kept)
    n_red = math.prod(ctx.hint(xv.shape[d]) for d in red)
    one_tile = n_red <= ONE_TILE_MAX
    if one_tile:
        bo_val, br, warps_val = _one_tile_defaults(n_rows, n_red)
        bo = ctx.tunable(f"{tag}_BLOCK_O", bo_val, "rows per program (each row is one whole tile)")
    else:  # rows longer than a tile: one row a program, stepped through in TILE-element steps
        bo, br = "1", ctx.tunable(f"{tag}_BLOCK_R", TILE, "row elements per step; a power of two")
        warps_val = 8
    warps = ctx.tunable(f"{tag}_WARPS", warps_val, "1, 2, 4, 8 or 16")
    src = Source(ctx, x, kept, red)
    y = ctx.fresh("buf")
    ctx.empty(y, root)
    views = []
    for ext in others:
        views.append(ctx.fresh("ge"))
        ctx.line(f"{views[-1]} = {ctx.tensor(ext)}.expand({y}.shape)")
    ks, rs = [f"ks{i}" for i in range(len(kept))], [f"rs{i}" for i in range(len(red))]
    kx, rx = src.stride_params(kept, "b"), src.stride_params(red, "r")
    gk = {f"gb{k}": [f"gbs{k}_{i}" for i in range(len(kept))] for k in range(len(others))}
    gr = {f"gr{k}": [f"grs{k}_{i}" for i in range(len(red))] for k in range(len(others))}
    ky, ry = [f"ky{i}" for i in range(len(kept))], [f"ry{i}" for i in range(len(red))]
    params = [*src.ptr_params(), *(f"g{k}_ptr" for k in range(len(others))),
              *(f"gsc{j}" for j in range(len(group.scalars))), "y_ptr", "n_rows", "R", *ctx.sizes(ks + rs),
              *sum(kx.values(), []), *sum(rx.values(), []), *sum(gk.values(), []), *sum(gr.values(), []), *ky, *ry,
              "BLOCK_O: tl.constexpr", "BLOCK_R: tl.constexpr", *ctx.idx_param()]
    head = [f"    o = {ctx.pid(0)} * BLOCK_O + tl.arange(0, BLOCK_O)", "    o_mask = o < n_rows",
            *decompose("o", ks, {**kx, **gk, "yb": ky}, "k")]
    names = {s.name: f"gsc{j}" for j, s in enumerate(group.scalars)}
    names.update({node.name: f"red{i}[:, None]" for i, node in enumerate(reds)})
    names.update({ext.name: f"ga{k}" for k, ext in enumerate(others)})
    if x.name in ctx.prologue:  # computed at the loads (``_recomputable``): the chain reads the loaded tile
        names[x.name] = "v"
    prelude = []  # the reduced-shape chains, once per row
    for j, (e, f) in enumerate(fusion.absorbed):
        chain_lines, chain_result = pointwise.body(pointwise.collect(f, ctx.inline), names, "[BLOCK_O, 1]")
        prelude += [*chain_lines, f"rc{j} = {chain_result}"]
        names[e.name] = f"rc{j}"
    body, result = pointwise.body(group, names, "[BLOCK_O, BLOCK_R]")
    loads = [f"ga{k} = tl.load(g{k}_ptr + gb{k}[:, None] + gr{k}[None, :], mask=m, other=0)"
             f".to({compute_type(val(ext).dtype)})" for k, ext in enumerate(others)]
    write = [*loads, *body, f"tl.store(y_ptr + yb[:, None] + yr[None, :], _cast_out({result}, y_ptr), mask=m)"]

    def step(start: str, indent: str) -> list[str]:
        """Columns ``start`` + [0, BLOCK_R) of the rows: offsets, mask and the source's values ``v``."""
        return [f"{indent}r = {start} + tl.arange(0, BLOCK_R)",
                *decompose("r", rs, {**rx, **gr, "yr": ry}, "q", indent),
                f"{indent}m = o_mask[:, None] & (r < R)[None, :]", *src.load("m", "0.0", "tl.float32", indent)]

    form = _one_tile if one_tile else _looped
    lines = head + form(reds, step, write, [f"    {line}" for line in prelude])
    ops = ", ".join(sorted({packet(n) for n in reds} | {packet(m) for m in group.members}))
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):",
                                  f"    # rows over dims {red}{src.what}, reduced and written in one pass: {ops}",
                                  *lines]))
    rows = " * ".join(src.size(d) for d in kept) or "1"
    length = " * ".join(src.size(d) for d in red) or "1"
    launch = [*src.ptr_launch(), *views, *(ctx.sym(s) for s in group.scalars), y, rows, length,
              *(src.size(d) for d in kept), *(src.size(d) for d in red), *src.stride_launch(kept),
              *src.stride_launch(red), *(f"{v}.stride({d})" for v in views for d in kept),
              *(f"{v}.stride({d})" for v in views for d in red), *(f"{y}.stride({d})" for d in kept),
              *(f"{y}.stride({d})" for d in red), f"BLOCK_O={bo}",
              f"BLOCK_R={f'triton.next_power_of_2({length})' if one_tile else br}",
              *ctx.idx_launch([y, *src.views, *views]), f"num_warps={warps}"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({rows}, {bo})),)]", launch)
    ctx.bind(root, y)


def _finish(kind: str, i: int, acc: str) -> str:
    """``red{i}``, reduction ``kind`` of the [BLOCK_O, BLOCK_R] tile ``acc`` (masked lanes neutral)."""
    return f"red{i} = {PARTIAL[kind].replace('acc', acc)}{FINISH[kind]}"


def _neutral(kind: str) -> str:
    return {"max": "float('-inf')", "min": "float('inf')"}.get(kind, "0.0")


def _one_tile(reds: list[Node], step, write: list[str], prelude: list[str]) -> list[str]:  # noqa: ANN001
    """The whole row in registers: read once, each reduction over the tile, then the chain and the store."""
    lines = step("0", "    ")
    for i, node in enumerate(reds):
        kind = KINDS[packet(node)]
        if kind == "var":  # two passes over the registers: as exact as the unfused var
            lines += [f"    mu{i} = tl.sum(v, axis=1) / R", f"    d{i} = tl.where(m, v - mu{i}[:, None], 0.0)",
                      f"    red{i} = tl.sum(d{i} * d{i}, axis=1) / (R - {_correction(kind, schema_args(node))})"]
        else:
            lines.append(f"    {_finish(kind, i, f'tl.where(m, v, {_neutral(kind)})')}")
    return lines + prelude + [f"    {line}" for line in write]


def _looped(reds: list[Node], step, write: list[str], prelude: list[str]) -> list[str]:  # noqa: ANN001
    """Rows longer than a tile: one loop accumulating every reduction (a var's mean among them), a second for
    the vars' squared deviations, then a loop that evaluates the chain and stores."""
    kinds = [KINDS[packet(n)] for n in reds]
    lines = [f"    acc{i} = tl.full([BLOCK_O, BLOCK_R], {_neutral(k)}, tl.float32)" for i, k in enumerate(kinds)]
    lines += ["    for r0 in range(0, R, BLOCK_R):", *step("r0", "        ")]
    for i, kind in enumerate(kinds):
        combine = {"max": f"tl.maximum(acc{i}, tl.where(m, v, float('-inf')))",
                   "min": f"tl.minimum(acc{i}, tl.where(m, v, float('inf')))"}.get(kind, f"acc{i} + v")
        lines.append(f"        acc{i} = {combine}")
    for i, kind in enumerate(kinds):
        lines.append(f"    {_finish('mean' if kind == 'var' else kind, i, f'acc{i}')}")
    variances = [i for i, k in enumerate(kinds) if k == "var"]
    if variances:
        lines += [f"    sq{i} = tl.zeros([BLOCK_O, BLOCK_R], tl.float32)" for i in variances]
        lines += ["    for r0 in range(0, R, BLOCK_R):", *step("r0", "        ")]
        for i in variances:
            lines += [f"        d{i} = tl.where(m, v - red{i}[:, None], 0.0)", f"        sq{i} += d{i} * d{i}"]
        lines += [f"    red{i} = tl.sum(sq{i}, axis=1) / (R - {_correction('var', schema_args(reds[i]))})"
                  for i in variances]
    return lines + prelude + ["    for r0 in range(0, R, BLOCK_R):", *step("r0", "        "),
                    *[f"        {line}" for line in write]]
