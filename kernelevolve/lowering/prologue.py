"""Prologue fusion: the pointwise chain that feeds a reduction or row op is computed at its loads.

A reduction, softmax, layer norm or scan whose input is a pointwise chain used nowhere else reads the
chain's inputs instead, each through its own strides (expanded to the chain's shape), and evaluates the
chain on every loaded tile: ``(a - b).pow(2).mean()`` or ``softmax(x * scale)`` is one kernel and one pass
over memory instead of two kernels and a round trip through a buffer.
"""

from __future__ import annotations

from torch.fx import Node

from kernelevolve.lowering import pointwise
from kernelevolve.lowering.context import Context, compute_type, packet, val

CONSUMERS = {"sum", "mean", "prod", "amax", "amin", "var", "argmax", "argmin", "max", "min", "any", "all",
             "_softmax", "_log_softmax", "native_layer_norm", "cumsum", "cumprod"}


def plan(graph, inline: set[str]) -> set[str]:  # noqa: ANN001
    """Pointwise chain roots to compute inside their consumer's loads."""
    fused = set()
    for node in graph.nodes:
        if node.op != "call_function" or packet(node) not in CONSUMERS or not node.args:
            continue
        x = node.args[0]
        if (isinstance(x, Node) and pointwise.is_pointwise(x) and x.name not in inline and len(x.users) == 1
                and not pointwise.is_constant(x)):
            fused.add(x.name)
    return fused


class Source:
    """The tensor a row/reduction kernel reads: one buffer, or a fused chain over several (``inputs``)."""

    def __init__(self, ctx: Context, x: Node, kept: list[int], red: list[int]) -> None:
        self.ctx, self.x, self.kept, self.red = ctx, x, kept, red
        self.group = pointwise.collect(x, ctx.inline) if x.name in ctx.prologue else None
        self.inputs = self.group.externals if self.group else [x]
        self.scalars = self.group.scalars if self.group else []
        self.views: list[str] = []
        for ext in self.inputs:
            if self.group:
                view = ctx.fresh("src")
                ctx.line(f"{view} = {ctx.tensor(ext)}.expand({ctx.shape(val(x))})")
                self.views.append(view)
            else:
                self.views.append(ctx.tensor(ext))

    @property
    def what(self) -> str:
        return f" of fused {', '.join(sorted({packet(m) for m in self.group.members}))}" if self.group else ""

    def ptr_params(self) -> list[str]:
        return [f"x{j}_ptr" for j in range(len(self.inputs))] + [f"psc{j}" for j in range(len(self.scalars))]

    def ptr_launch(self) -> list[str]:
        return [self.ctx.tensor(e) for e in self.inputs] + [self.ctx.sym(s) for s in self.scalars]

    def size(self, d: int) -> str:
        return f"{self.views[0]}.shape[{d}]" if not self.group else self.ctx.sym(val(self.x).shape[d])

    def stride_params(self, dims: list[int], tag: str) -> dict[str, list[str]]:
        """Kernel stride names per input for ``dims``: {``x{tag}{j}``: [...]}."""
        return {f"x{tag}{j}": [f"{tag}x{j}_{i}" for i in range(len(dims))] for j in range(len(self.inputs))}

    def stride_launch(self, dims: list[int]) -> list[str]:
        return [f"{v}.stride({d})" for v in self.views for d in dims]

    def load(self, mask: str, other: str, ct: str, indent: str) -> list[str]:
        """Lines assigning ``v``: the source's value on the [BLOCK_O, BLOCK_R] tile (``other`` where masked)."""
        if not self.group:
            return [f"{indent}v = tl.load(x0_ptr + xb0[:, None] + xr0[None, :], mask={mask}, other={other}).to({ct})"]
        names, lines = {}, []
        for j, ext in enumerate(self.inputs):
            lines.append(f"{indent}a{j} = tl.load(x{j}_ptr + xb{j}[:, None] + xr{j}[None, :], mask={mask}, "
                         f"other=0).to({compute_type(val(ext).dtype)})")
            names[ext.name] = f"a{j}"
        for j, s in enumerate(self.scalars):
            names[s.name] = f"psc{j}"
        body, result = pointwise.body(self.group, names, "[BLOCK_O, BLOCK_R]")
        lines += [f"{indent}{line}" for line in body]
        lines.append(f"{indent}v = tl.where({mask}, {result}.to({ct}), {other})")
        return lines
