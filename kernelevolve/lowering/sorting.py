"""sort, topk, argsort and median along one dim: BLOCK_O whole rows per program, sorted by ``tl.sort``.

Values alone sort the rows themselves (padded to a power of two with the sort's last value). Where indices
are used too, each element becomes one uint64 key: its float bits mapped to an order-preserving uint32
(negatives inverted, NaN canonical and largest, as torch orders it) in the high half and its index in the
low half, so one ``tl.sort`` orders values and breaks ties by position (torch's stable order), and the
values are read back from the input at the sorted indices. Pad positions get the largest key.
"""

from __future__ import annotations

import math

from torch.fx import Node

from kernelevolve.lowering.context import Context, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import decompose, norm_dims, schema_args

_PACK = ["    bits = tl.where(v != v, 0x7FC00000, v.to(tl.uint32, bitcast=True))",
         "    key = tl.where((bits >> 31) == 1, ~bits, bits | 0x80000000)"]
TILE = 4096  # elements a program sorts at once (BLOCK_O rows of BLOCK_R)
RANK_TILE = 1 << 20  # the interpreter's rank form: BLOCK_O x BLOCK_R x BLOCK_R pairs, Triton's largest block


def _keys(descending: bool) -> list[str]:
    """Lines setting ``packed``: one unique uint64 per element, ascending in the wanted order, pads last."""
    return [*_PACK, *(["    key = ~key"] if descending else []),
            "    key = tl.where((r < R)[None, :], key, 0xFFFFFFFF)",
            "    packed = (key.to(tl.uint64) << 32) | r[None, :].to(tl.uint64)"]


def _sorted_positions(descending: bool) -> list[str]:
    """Lines setting ``idx``: each row's input positions in sorted order (the GPU form, through tl.sort)."""
    return [*_keys(descending), "    s = tl.sort(packed, dim=1)", "    idx = (s & 0xFFFFFFFF).to(tl.int64)"]


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def emit_sort(ctx: Context, node: Node) -> None:
    """sort / topk / median.dim: values, and indices where a user reads them (median always finds one).

    On Triton's CPU interpreter, tl.sort runs its xor reductions element by element in Python (16 s for one
    64 x 256 sort), so the interpreter's drafts rank instead while a program's pairs fit ``RANK_TILE``: each
    element's position is the count of smaller keys, and it is stored there (a scatter)."""
    args = schema_args(node)
    x = args["self"]
    name = node.target.overloadpacket.__name__
    with_indices = any(u.args[1] != 0 for u in node.users)
    ndim = val(x).dim()
    dim = norm_dims(args.get("dim", -1), max(ndim, 1))[0] if ndim else 0
    descending = bool(args.get("largest", True)) if name == "topk" else bool(args.get("descending", False))
    median = name == "median"
    if median and args.get("keepdim", False):
        raise LoweringError("no Triton lowering for aten.median.dim with keepdim=True")
    if (with_indices or median) and not val(x).dtype.is_floating_point:
        raise LoweringError(f"no Triton lowering for the indices of {node.target} on {val(x).dtype}")
    kept = [d for d in range(ndim) if d != dim]
    kname = ctx.fresh(f"_{name}")
    tag = kname.lstrip("_").upper()
    row_tile = ctx.block(val(x).shape[dim] if ndim else 1, 1, 1 << 20)
    per_program = max(1, RANK_TILE // row_tile**2 if ctx.interpreter else TILE // row_tile)
    rows = ctx.tunable(f"{tag}_BLOCK_O", ctx.block(math.prod(ctx.hint(val(x).shape[d]) for d in kept), 1,
                                                   per_program), "rows per program; a power of two")
    pad = "float('-inf')" if descending else "float('inf')"
    ys = [f"ky{i}" for i in range(len(kept))]
    params = ["x_ptr", "y_ptr", "n_rows", "R", "K", *[f"ks{i}" for i in range(len(kept))],
              *[f"kx{i}" for i in range(len(kept))], *ys, "rx", "ry",
              *(["yi_ptr"] if with_indices or median else []), "BLOCK_O: tl.constexpr", "BLOCK_R: tl.constexpr"]
    lines = ["    o = tl.program_id(0).to(tl.int64) * BLOCK_O + tl.arange(0, BLOCK_O)", "    o_mask = o < n_rows",
             *decompose("o", [f"ks{i}" for i in range(len(kept))],
                        {"xb": [f"kx{i}" for i in range(len(kept))], "yb": ys}, "k"),
             "    r = tl.arange(0, BLOCK_R)",
             f"    v = tl.load(x_ptr + xb[:, None] + r[None, :] * rx, mask=o_mask[:, None] & (r < R)[None, :], "
             f"other={pad}).to(tl.float32)"]
    keep = "o_mask[:, None] & (r < K)[None, :]"
    ranked = [*_keys(descending), "    pos = tl.sum((packed[:, None, :] < packed[:, :, None]).to(tl.int64), axis=2)"]
    if median:  # the lower median: position (R - 1) // 2 of the ascending order, or (torch) the first NaN
        ranked += ["    at = tl.sum(tl.where(pos == (R - 1) // 2, r[None, :], 0), axis=1).to(tl.int64)"]
        sorted_ = [*_sorted_positions(False), "    at = tl.sum(tl.where((r == (R - 1) // 2)[None, :], idx, 0), axis=1)"]
        tail = ["    nan_at = tl.min(tl.where((v != v) & (r < R)[None, :], r[None, :], BLOCK_R), axis=1)",
                "    at = tl.where(nan_at < R, nan_at.to(tl.int64), at)",
                "    tl.store(y_ptr + yb, tl.load(x_ptr + xb + at * rx, mask=o_mask), mask=o_mask)",
                "    tl.store(yi_ptr + yb, at, mask=o_mask)"]
    else:  # the ranked form stores each element at its position; the sorted form reads the sorted tile
        ok = "o_mask[:, None] & (r < R)[None, :] & (pos < K)"
        ranked += [f"    xo = tl.load(x_ptr + xb[:, None] + r[None, :] * rx, mask={ok})",
                   f"    tl.store(y_ptr + yb[:, None] + pos * ry, xo, mask={ok})"]
        ranked += [f"    tl.store(yi_ptr + yb[:, None] + pos * ry, r[None, :] + pos * 0, mask={ok})"] if with_indices \
            else []
        if with_indices:
            sorted_ = [*_sorted_positions(descending),
                       f"    tl.store(y_ptr + yb[:, None] + r[None, :] * ry, tl.load(x_ptr + xb[:, None] + idx * rx, "
                       f"mask={keep}), mask={keep})",
                       f"    tl.store(yi_ptr + yb[:, None] + r[None, :] * ry, idx, mask={keep})"]
        else:
            sorted_ = [f"    s = tl.sort(v, dim=1, descending={descending})",
                       f"    tl.store(y_ptr + yb[:, None] + r[None, :] * ry, _cast_out(s, y_ptr), mask={keep})"]
        tail = []
    if ctx.interpreter:
        lines += [f"    if BLOCK_O * BLOCK_R * BLOCK_R <= {RANK_TILE}:", *_indent(ranked), "    else:",
                  *_indent(sorted_)]
    else:
        lines += sorted_
    lines += tail
    order = " median" if median else " descending" if descending else ""
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):",
                                  f"    # {name} along dim {dim}{order}{' with indices' if with_indices else ''}",
                                  *lines]))
    outputs = val(node)
    y = ctx.fresh("buf")
    ctx.empty(y, node, outputs[0])
    names = [y, y]
    if with_indices or median:
        names[1] = ctx.fresh("buf")
        ctx.empty(names[1], node, outputs[1])
    xv = ctx.tensor(x)
    k = ctx.sym(args["k"]) if name == "topk" else "1" if median else f"{xv}.shape[{dim}]"
    n_rows = " * ".join(f"{xv}.shape[{d}]" for d in kept) or "1"
    launch = [xv, y, n_rows, f"{xv}.shape[{dim}]", k]
    launch += [f"{xv}.shape[{d}]" for d in kept] + [f"{xv}.stride({d})" for d in kept]
    if median:  # the reduced output: its dims are the kept ones, in order
        launch += [f"{y}.stride({i})" for i in range(len(kept))] + [f"{xv}.stride({dim})", "0"]
    else:
        launch += [f"{y}.stride({d})" for d in kept] + [f"{xv}.stride({dim})", f"{y}.stride({dim})"]
    launch += [names[1]] if with_indices or median else []
    launch += [f"BLOCK_O={rows}", f"BLOCK_R=triton.next_power_of_2({xv}.shape[{dim}])"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({n_rows}, {rows})),)]", launch)
    ctx.multi[node.name] = names


EMITTERS = {"sort": emit_sort, "topk": emit_sort, "median": emit_sort}
