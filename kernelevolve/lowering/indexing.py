"""Kernel and host text for strided N-d addressing: a linear index over some dims -> element offsets.

Templates view a tensor as (kept dims) x (reduced dims) without moving it: the kernel decomposes a row
index over the kept sizes and a column index over the reduced sizes, dotting each digit with the
tensor's own strides, so permuted, sliced or broadcast inputs are read in place.
"""

from __future__ import annotations

from torch.fx import Node

from kernelevolve.lowering.context import Context, val


def decompose(var: str, sizes: list[str], strides: dict[str, list[str]], tag: str,
              indent: str = "    ") -> list[str]:
    """Lines setting ``<name> = sum_d digit_d(var) * strides[name][d]`` for each name (last dim fastest)."""
    if not sizes:
        return [f"{indent}{name} = {var} * 0" for name in strides]
    lines = [f"{indent}{tag}_rem = {var}"]
    for name in strides:
        lines.append(f"{indent}{name} = {var} * 0")
    for d in reversed(range(len(sizes))):
        digit = f"{tag}_rem" if d == 0 else f"({tag}_rem % {sizes[d]})"
        if d:
            lines.append(f"{indent}{tag}_i = {digit}")
            digit = f"{tag}_i"
        for name, st in strides.items():
            lines.append(f"{indent}{name} += {digit} * {st[d]}")
        if d:
            lines.append(f"{indent}{tag}_rem = {tag}_rem // {sizes[d]}")
    return lines


def norm_dims(dims: object, rank: int) -> list[int]:
    """A dim argument (int, list, None or []) as sorted non-negative dims; None and [] mean all dims."""
    if dims is None:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    out = sorted({d % rank if rank else 0 for d in dims})  # type: ignore[union-attr]
    return out if out or rank == 0 else list(range(rank))


def schema_args(node: Node) -> dict[str, object]:
    schema = node.target._schema  # type: ignore[union-attr]
    values = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            values[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            values[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            values[arg.name] = arg.default_value
    return values


def rank(node: Node) -> int:
    return val(node).dim()


def padded_load(address: str, base: str, mask: str, other: str) -> str:
    """``tl.load`` of a padded tap at ``address``; under the kernel's ``GUARD`` constexpr, masked-off lanes
    load from ``base`` (the tensor's first element) instead of past the tensor.

    Triton 3.6 on Hopper (H100 and H200 alike) miscompiled the depthwise template's masked tap load: with
    32-row tiles, lanes whose mask was false still brought in the bytes past the input's end (EfficientNetB0
    failed correctness under the evaluator's guard bands, and was wrong but finite in a plain run). The
    guarded form keeps every address in bounds, but it also stops Triton from vectorising the load: on an
    H200 it cost 1.01-2.2x on the stencil templates (benchmarks/results/padded_load_h200.md). So it is a
    flag the search can flip, off in the first draft and on in the second (operators/offline.py).
    """
    return f"tl.load(tl.where({mask}, {address}, {base}) if GUARD else {address}, mask={mask}, other={other})"


GUARD_PARAM = "GUARD: tl.constexpr"


def guard_tunable(ctx: Context, tag: str) -> str:
    """The kernel's ``GUARD`` flag (see padded_load) as a tunable of the draft, off by default."""
    return ctx.tunable(f"{tag}_GUARD", 0, "1: masked lanes keep in-bounds addresses (slower; sidesteps a Triton "
                       "miscompile); 0: plain masked loads")
