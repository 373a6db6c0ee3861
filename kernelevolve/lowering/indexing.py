"""Kernel and host text for strided N-d addressing: a linear index over some dims -> element offsets.

Templates view a tensor as (kept dims) x (reduced dims) without moving it: the kernel decomposes a row
index over the kept sizes and a column index over the reduced sizes, dotting each digit with the
tensor's own strides, so permuted, sliced or broadcast inputs are read in place.
"""

from __future__ import annotations

from torch.fx import Node

from kernelevolve.lowering.context import val


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


def padded_load(base: str, offset: str, mask: str, other: str) -> str:
    """``tl.load`` of a padded tap whose masked-off lanes point back at ``base`` rather than past the tensor.

    Triton 3.6 on Hopper (H100 and H200 alike) miscompiled the depthwise template's masked tap load: with
    32-row tiles, lanes whose mask was false still brought in the bytes past the input's end. The last
    (batch, channel) plane then read whatever followed the input, NaN under the evaluator's poison
    (EfficientNetB0 failed correctness), and wrong but finite values in a plain run. Pointing masked lanes at
    the first element keeps every address in bounds, so the result no longer depends on the neighbouring
    allocation (benchmarks/results/padded_load_h200.md).
    """
    return f"tl.load(tl.where({mask}, {base} + {offset}, {base}), mask={mask}, other={other})"
