"""Epilogue fusion: the pointwise chain that consumes a matmul/conv/pool output runs inside that kernel.

When a template's output has a single pointwise user whose group (``pointwise.collect``) ends in a value
of the template's own shape, and every other input of the group is already computed, the group's
expression is evaluated on the template's fp32 tile before the one store: bias adds, activations,
residual adds and scales cost no extra pass over memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch.fx import Node

from kernelevolve.lowering import pointwise
from kernelevolve.lowering.context import Context, compute_type, packet, val


@dataclass
class Epilogue:
    group: pointwise.Group
    anchor: Node
    params: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # loads and expressions, unindented
    result: str = "acc"
    launch: list[str] = field(default_factory=list)
    host: list[str] = field(default_factory=list)  # forward lines before the launch (expanded views)


RESHAPES = {"view", "_unsafe_view", "reshape"}


def find(ctx: Context, node: Node, through_views: bool = False) -> tuple[pointwise.Group, Node] | None:
    """The pointwise group to fuse into ``node``'s kernel and the node the group reads the tile as (``node``
    itself, or with ``through_views`` a reshape of it: a linear on a 3-d input is an mm between views)."""
    inline = ctx.inline
    anchor = node
    while through_views and len(anchor.users) == 1 and packet(next(iter(anchor.users))) in RESHAPES:
        anchor = next(iter(anchor.users))
    users = list(anchor.users)
    if len(users) != 1 or not pointwise.is_pointwise(users[0]):
        return None
    root = users[0]
    while root.name in inline:
        root = next(iter(root.users))
    if root.name in ctx.prologue:
        return None  # the reduction or row op it feeds computes the chain at its loads
    group = pointwise.collect(root, inline)
    if tuple(val(root).shape) != tuple(val(anchor).shape) or group.externals.count(anchor) != 1:
        return None
    if anchor is not node and not _viewable(group, anchor, node):
        return None
    for ext in group.externals:  # a side input computed later from ready values (rsqrt(var + eps)): now
        if ext is not anchor:
            _emit_early(ctx, ext, 4)
    if any(e is not anchor and e.name not in ctx.env for e in group.externals):
        return None  # an input of the chain is computed later
    return group, anchor


def _emit_early(ctx: Context, node: Node, depth: int) -> bool:
    """Give ``node`` a host value now if it is a view or a pointwise chain of values that have one (or can
    get one the same way, ``depth`` levels down): a batch norm's rsqrt(var + eps).view(...) comes after
    the conv in graph order but depends only on parameters."""
    from kernelevolve.lowering import views

    if node.name in ctx.env:
        return True
    if depth == 0 or node.op != "call_function":
        return False
    if views.is_view(node) and packet(node) in ("view", "_unsafe_view", "reshape", "permute", "expand",
                                                 "unsqueeze", "squeeze", "alias"):
        if not _emit_early(ctx, node.args[0], depth - 1):
            return False
        views.emit(ctx, node)
    elif pointwise.is_pointwise(node) and node.name not in ctx.inline and node.name not in ctx.prologue:
        group = pointwise.collect(node, ctx.inline)
        if not all(_emit_early(ctx, e, depth - 1) for e in group.externals):
            return False
        pointwise.emit(ctx, node, ctx.inline)
    else:
        return False
    ctx.done.add(node.name)
    return True


def _viewable(group: pointwise.Group, anchor: Node, node: Node) -> bool:
    """Every other input of the chain, expanded to the chain's shape, reshapes to the tile's shape as a view
    (checked on the traced strides): the epilogue then reads it at the tile's indices."""
    for ext in group.externals:
        if ext is anchor:
            continue
        try:
            val(ext).expand(val(anchor).shape).view(val(node).shape)
        except Exception:  # noqa: BLE001 - not a view: no fusion
            return False
    return True


def build(ctx: Context, group: pointwise.Group, anchor: Node, index: list[str], mask: str, block_shape: str,
          out_var: str, tile_shape: str | None = None) -> Epilogue:
    """Kernel text evaluating ``group`` on the tile ``acc`` (the anchor's value) at the tile's ``index``
    expressions (one per tile dim); ``tile_shape``: the host shape the tile has when the group reads it
    through a reshape."""
    epi = Epilogue(group, anchor)
    names = {anchor.name: "acc"}
    rank = len(index)
    for j, ext in enumerate(e for e in group.externals if e is not anchor):
        ct = compute_type(val(ext).dtype)
        epi.params += [f"ep{j}_ptr"] + [f"ep{j}_st{d}" for d in range(rank)]
        addr = " + ".join(f"{index[d]} * ep{j}_st{d}" for d in range(rank)) or "0"
        epi.lines.append(f"ep{j} = tl.load(ep{j}_ptr + {addr}, mask={mask}, other=0).to({ct})")
        names[ext.name] = f"ep{j}"
        view = f"ev{j}"
        reshaped = f".view({tile_shape})" if tile_shape else ""
        epi.host.append(f"{view} = {ctx.tensor(ext)}.expand({out_var}.shape){reshaped}")
        epi.launch += [ctx.tensor(ext)] + [f"{view}.stride({d})" for d in range(rank)]
    for j, s in enumerate(group.scalars):
        epi.params.append(f"esc{j}")
        epi.launch.append(ctx.sym(s))
        names[s.name] = f"esc{j}"
    lines, result = pointwise.body(group, names, block_shape)
    epi.lines += lines
    epi.result = result
    return epi


def fused_output(ctx: Context, node: Node, index: list[str], mask: str, block_shape: str,
                 ) -> tuple[str, pointwise.Group | None, Epilogue | None]:
    """A template's output buffer, with the pointwise group (if any) that its store evaluates: the buffer
    stands for the group's root when one is fused. ``index``/``mask``/``block_shape`` as in :func:`build`."""
    out = ctx.fresh("buf")
    found = find(ctx, node)
    group = found[0] if found else None
    ctx.empty(out, group.root if group else node)
    return out, group, build(ctx, group, node, index, mask, block_shape, out) if group else None


def label(what: str, group: pointwise.Group | None) -> str:
    """A kernel's header comment: what it computes, and the ops fused into its store."""
    return what + (" + fused " + ", ".join(sorted({packet(m) for m in group.members})) if group else "")


def bind_output(ctx: Context, node: Node, group: pointwise.Group | None, out: str) -> None:
    """``out`` is ``node``'s value, and the fused group's (which no other kernel computes now)."""
    if group:
        ctx.done.add(group.root.name)
        ctx.bind(group.root, out)
    ctx.bind(node, out)
