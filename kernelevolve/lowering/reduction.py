"""Reductions over any set of dims: sum, mean, prod, amax/amin, var, argmax/argmin, max/min.dim, any/all.

One program reduces BLOCK_O output elements, walking the reduced elements BLOCK_R at a time into a
[BLOCK_O, BLOCK_R] accumulator (reduced across its columns once at the end). Rows and columns are
decomposed over the kept and reduced dims with the input's strides, so any dims of any layout reduce in
place; the output is contiguous with the kept dims in order, so its offset is the row index itself.
On a GPU, few outputs over long rows are split over SPLIT programs each and a combine kernel: partial
sums/extremes, or for var/var_mean chunk means and M2s merged by Chan's formula (split_stats.py).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.fx import Node

from kernelevolve.lowering import split_stats
from kernelevolve.lowering.context import Context, compute_type, packet, val
from kernelevolve.lowering.dots import SMS
from kernelevolve.lowering.indexing import decompose, norm_dims, schema_args
from kernelevolve.lowering.prologue import Source

KINDS = {"sum": "sum", "mean": "mean", "prod": "prod", "amax": "max", "amin": "min", "var": "var", "var_mean": "var",
         "argmax": "argmax", "argmin": "argmin", "max": "max", "min": "min", "any": "any", "all": "all"}


def _acc_type(kind: str, dtype: torch.dtype) -> str:
    if dtype.is_floating_point:
        return "tl.float64" if dtype == torch.float64 else "tl.float32"
    if kind in ("sum", "prod", "mean"):
        return "tl.int64"
    if kind in ("any", "all"):
        return "tl.int32"
    return compute_type(dtype)


def _extreme(kind: str, dtype: torch.dtype) -> str:
    low = kind in ("max", "argmax")
    if dtype.is_floating_point:
        return "float('-inf')" if low else "float('inf')"
    if dtype == torch.bool:
        return "0" if low else "1"
    info = torch.iinfo(dtype)
    return str(info.min if low else info.max)


COMBINE = {"sum": "acc + v", "mean": "acc + v", "prod": "acc * v", "max": "tl.maximum(acc, v)",
           "min": "tl.minimum(acc, v)", "any": "tl.maximum(acc, v)", "all": "tl.minimum(acc, v)"}
PARTIAL = {"sum": "tl.sum(acc, axis=1)", "mean": "tl.sum(acc, axis=1)", "prod": "tl.reduce(acc, 1, _mul_combine)",
           "max": "tl.max(acc, axis=1)", "min": "tl.min(acc, axis=1)", "any": "tl.max(acc, axis=1)",
           "all": "tl.min(acc, axis=1)"}
# tl.maximum/tl.max skip NaN (fmax), but ATen's max/amax/min/amin propagate it: floating extremes keep NaN in
# the running accumulator and finish through a helper that returns NaN for a row holding one (mathlib.py)
NAN_COMBINE = {"max": "tl.maximum(acc, v, propagate_nan=tl.PropagateNan.ALL)",
               "min": "tl.minimum(acc, v, propagate_nan=tl.PropagateNan.ALL)"}
NAN_PARTIAL = {"max": "_extreme_rows_nan(acc, True)", "min": "_extreme_rows_nan(acc, False)"}
FINISH = {"mean": " / R", "any": " != 0", "all": " != 0"}
FINISH = {kind: FINISH.get(kind, "") for kind in COMBINE}
PARTIAL_DTYPES = {"tl.float32": "torch.float32", "tl.float64": "torch.float64", "tl.int64": "torch.int64",
                  "tl.int32": "torch.int32"}
TARGET_PROGRAMS = 512  # about four programs per SM of an H100 (132 SMs)
TILE = 4096  # elements of an NVIDIA draft's [BLOCK_O, BLOCK_R] tile


def _combine_partial(kind: str, acc: str) -> tuple[str, str]:
    """The accumulator's update and its per-row reduction for ``kind`` in the type ``acc``."""
    if kind in NAN_COMBINE and acc in ("tl.float32", "tl.float64"):
        return NAN_COMBINE[kind], NAN_PARTIAL[kind]
    return COMBINE[kind], PARTIAL[kind]


def _arg_extreme_body(kind: str, init: str, acc: str, step: list[str]) -> list[str]:
    """argmax/argmin (and max/min with indices) leaving ``best`` and ``best_i`` per output. Each lane keeps its
    own best and first index across the steps, and the lanes are combined once at the end, as the retired ATen
    template engine did (its argmax ran 2.1x faster on an H100 than a cross-lane ``tl.argmax`` per step,
    ``aten_lowering_merge_h100.md``). As in ATen, NaN is the extreme and the first NaN's index is returned; among
    equal values, the first index (the per-step form dropped NaN)."""
    pick, better = ("tl.max", ">") if kind == "argmax" else ("tl.min", "<")
    floating = acc in ("tl.float32", "tl.float64")
    take = f"(v {better} lane) | ((v != v) & (lane == lane))" if floating else f"v {better} lane"
    body = [f"    lane = tl.full([BLOCK_O, BLOCK_R], {init}, {acc})",
            "    lane_i = tl.zeros([BLOCK_O, BLOCK_R], tl.int64)", "    for r0 in range(0, R, BLOCK_R):", *step,
            f"        take = m & ({take})  # strict: a lane keeps its first occurrence",
            "        lane = tl.where(take, v, lane)",
            "        lane_i = tl.where(take, r[None, :].to(tl.int64), lane_i)"]
    if floating:
        body += ["    nan = tl.max((lane != lane).to(tl.int32), axis=1) > 0",
                 f"    best = {pick}(tl.where(lane != lane, {init}, lane), axis=1)",
                 "    best = tl.where(nan, float('nan'), best)",
                 "    hit = tl.where(nan[:, None], lane != lane, lane == best[:, None])"]
    else:
        body += [f"    best = {pick}(lane, axis=1)", "    hit = lane == best[:, None]"]
    # lanes no element reached hold the initial value at index 0, which is also the answer for a row of them
    return body + ["    best_i = tl.min(tl.where(hit, lane_i, R), axis=1)"]


def _contiguous_row_tile(n_out: int, n_red: int) -> tuple[int, int]:
    """(BLOCK_O, BLOCK_R) of an NVIDIA reduction over the innermost (contiguous) dim with many outputs: up to
    512 contiguous elements of a row per step, so each warp reads whole 128-byte lines, and rows per program only
    while four waves of programs remain and the tile stays within 2048 elements. 16 x 128 read 512 bytes a row
    and left 256 programs for 4096 rows; the retired template engine's 4 x 512 ran those sums 1.7x faster on an
    H100 (``aten_lowering_merge_h100.md``)."""
    br = 16
    while br < min(n_red, 512):
        br *= 2
    bo = 1
    while bo < 64 and bo * 2 * br <= 2048 and -(-n_out // (bo * 2)) >= 4 * SMS:
        bo *= 2
    return bo, br


def _split(n_out: int, bo: int, n_red: int, min_per_program: int = 8192) -> int:
    """Programs per output block when too few output blocks would occupy the GPU: a full reduction (MSE
    loss, a Frobenius norm) in one program reads a whole tensor at one SM's bandwidth."""
    programs, split = max(1, -(-n_out // bo)), 1
    while programs * split * 2 <= TARGET_PROGRAMS and n_red // (split * 2) >= min_per_program and split < 1024:
        split *= 2
    return split


def _launch_tail(src: Any, kept: list[int], red: list[int], bo: str, br: str, warps: str) -> list[str]:
    """The launch arguments every reduction kernel ends with: kept then reduced sizes and strides, then
    its block sizes and warps."""
    return [*(src.size(d) for d in kept), *src.stride_launch(kept), *(src.size(d) for d in red),
            *src.stride_launch(red), f"BLOCK_O={bo}", f"BLOCK_R={br}", f"num_warps={warps}"]


def _bind_outputs(ctx: Context, node: Node, vars_: list[str]) -> None:
    if isinstance(val(node), (list, tuple)):
        ctx.multi[node.name] = vars_
    else:
        ctx.bind(node, vars_[0])


def _emit_split(ctx: Context, node: Node, kname: str, tag: str, kind: str, name: str, red: list[int], src: Any,
                params: list[str], head: list[str], step: list[str], init: str, acc: str, bo: str, br: str,
                warps: str, split: int) -> None:
    """Two kernels: SPLIT programs per output block each reduce one CHUNK of the reduced elements into a
    partial (the accumulator's dtype), then one program per output block combines the SPLIT partials."""
    split_name = ctx.tunable(f"{tag}_SPLIT", split, "programs sharing each output's reduction; a power of two")
    params = ["part_ptr" if p == "out_ptr" else p for p in params]  # combine kinds have no other output
    params.insert(params.index("correction"), "CHUNK")
    update, partial = _combine_partial(kind, acc)
    body = [f"    acc = tl.full([BLOCK_O, BLOCK_R], {init}, {acc})",
            "    r_lo = tl.program_id(1).to(tl.int64) * CHUNK",
            "    for r0 in range(r_lo, r_lo + CHUNK, BLOCK_R):", *step, f"        acc = {update}",
            f"    tl.store(part_ptr + tl.program_id(1).to(tl.int64) * n_rows + o, {partial}, mask=o_mask)"]
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):",
                                   f"    # {name} over dims {red}{src.what}: one chunk's partial", *head, *body]))
    combine = ctx.fresh("_combine")
    ctag = combine.lstrip("_").upper()
    cbo = ctx.tunable(f"{ctag}_BLOCK_O", 16, "outputs per program")
    final = partial + FINISH[kind]
    ctx.kernels.append("\n".join([
        "@triton.jit", f"def {combine}(part_ptr, out_ptr, n_rows, R, SPLIT: tl.constexpr, BLOCK_O: tl.constexpr):",
        f"    # {name}: the SPLIT partials of each output combined",
        "    o = tl.program_id(0).to(tl.int64) * BLOCK_O + tl.arange(0, BLOCK_O)", "    o_mask = o < n_rows",
        "    s = tl.arange(0, SPLIT).to(tl.int64)",
        f"    acc = tl.load(part_ptr + s[None, :] * n_rows + o[:, None], mask=o_mask[:, None], other={init})",
        f"    res = {final}", "    tl.store(out_ptr + o, _cast_out(res, out_ptr), mask=o_mask)"]))
    [out] = ctx.empty_outputs(node)
    part = ctx.fresh("buf")
    reduced = " * ".join(src.size(d) for d in red) or "1"
    ctx.line(f"{part} = torch.empty(({split_name}, {out}.numel()), dtype={PARTIAL_DTYPES[acc]}, device={ctx.device})")
    kept = [d for d in range(val(node.args[0]).dim()) if d not in red]
    launch = [*src.ptr_launch(), part, f"{out}.numel()", reduced,
              split_stats.chunk(reduced, split_name, br), "0"]
    launch += _launch_tail(src, kept, red, bo, br, warps)
    ctx.launch(f"{kname}[(max(1, triton.cdiv({out}.numel(), {bo})), {split_name})]", launch)
    ctx.launch(f"{combine}[(max(1, triton.cdiv({out}.numel(), {cbo})),)]",
               [part, out, f"{out}.numel()", reduced, f"SPLIT={split_name}", f"BLOCK_O={cbo}"])
    ctx.bind(node, out)


def _correction(kind: str, args: dict[str, Any]) -> Any:
    """A var's divisor offset (``R - correction``): 1 when the op gives none, as ATen's default."""
    correction = args.get("correction")
    return 1 if kind == "var" and correction is None else (correction or 0)


def _emit_split_var(ctx: Context, node: Node, kname: str, tag: str, name: str, red: list[int], src: Any,
                    params: list[str], head: list[str], step: list[str], acc: str, bo: str, br: str, warps: str,
                    split: int, corr: Any) -> None:
    """var/var_mean of few long rows: SPLIT programs per output block each store their chunk's mean and M2,
    then one program per output block merges them (split_stats.py); as exact as the two-pass form."""
    split_name = ctx.tunable(f"{tag}_SPLIT", split, "programs sharing each output's reduction; a power of two")
    params = ["part_ptr" if p == "out_ptr" else p for p in params if p not in ("mean_ptr", "correction")]
    params.insert(params.index("R") + 1, "CHUNK")
    what = f"{name} over dims {red}{src.what}"
    ctx.kernels.append(split_stats.chunk_stats_kernel(kname, params, head, step, acc, what))
    outs = ["out_ptr", "mean_ptr"] if name == "var_mean" else ["out_ptr"]
    finish = ["    res = m2 / (R - correction)", "    tl.store(out_ptr + o, _cast_out(res, out_ptr), mask=o_mask)"]
    if name == "var_mean":
        finish.append("    tl.store(mean_ptr + o, _cast_out(mean, mean_ptr), mask=o_mask)")
    combine = ctx.fresh("_combine")
    cbo = ctx.tunable(f"{combine.lstrip('_').upper()}_BLOCK_O", 16, "outputs per program")
    ctx.kernels.append(split_stats.combine_kernel(combine, outs, ["correction"], finish, acc, what))
    vars_ = ctx.empty_outputs(node)
    n_out = f"{vars_[0]}.numel()"
    part = split_stats.partials(ctx, split_name, n_out, PARTIAL_DTYPES[acc])
    reduced = " * ".join(src.size(d) for d in red) or "1"
    chunk = split_stats.chunk(reduced, split_name, br)
    kept = [d for d in range(val(node.args[0]).dim()) if d not in red]
    launch = [*src.ptr_launch(), part, n_out, reduced, chunk]
    launch += _launch_tail(src, kept, red, bo, br, warps)
    ctx.launch(f"{kname}[(max(1, triton.cdiv({n_out}, {bo})), {split_name})]", launch)
    ctx.launch(f"{combine}[(max(1, triton.cdiv({n_out}, {cbo})),)]",
               [part, *vars_, n_out, reduced, chunk, ctx.sym(corr), f"SPLIT={split_name}", f"BLOCK_O={cbo}"])
    _bind_outputs(ctx, node, vars_)


def emit(ctx: Context, node: Node) -> None:
    name = packet(node)
    kind = KINDS[name]
    args = schema_args(node)
    x = args.get("self", node.args[0])
    xv = val(x)
    r = xv.dim()
    dims_arg = args.get("dim")
    indexed = name in ("argmax", "argmin") or (name in ("max", "min") and dims_arg is not None)
    if name in ("max", "min") and dims_arg is None:
        kind = name  # max.default: all elements
    if kind in ("argmax",) or (indexed and name == "max"):
        kind = "argmax"
    elif kind == "argmin" or (indexed and name == "min"):
        kind = "argmin"
    red = norm_dims(dims_arg if not isinstance(dims_arg, (list, tuple)) or dims_arg else None, r)
    kept = [d for d in range(r) if d not in red]
    acc = _acc_type(kind, xv.dtype)
    kname = ctx.fresh("_reduce")
    tag = kname.lstrip("_").upper()
    n_red = math.prod(ctx.hint(xv.shape[d]) for d in red)
    n_out = math.prod(ctx.hint(xv.shape[d]) for d in kept)
    rows_per_program = ctx.block(n_out, 1, 16, 64)
    r_val, warps_val = ctx.block(n_red, 16, 128, 1024), 4
    if ctx.nvidia and rows_per_program <= 4:  # few outputs (a loss, a norm): a 1 x 128 tile per step leaves
        # too few loads in flight; take up to 4096 elements a step
        r_val = ctx.block(n_red, 16, max(128, TILE // rows_per_program))
        warps_val = 8 if rows_per_program * r_val >= TILE else 4
    elif ctx.nvidia and r - 1 in red:
        rows_per_program, r_val = _contiguous_row_tile(n_out, n_red)
    bo = ctx.tunable(f"{tag}_BLOCK_O", rows_per_program, "output elements per program")
    br = ctx.tunable(f"{tag}_BLOCK_R", r_val, "reduced elements per step")
    warps = ctx.tunable(f"{tag}_WARPS", warps_val, "1, 2, 4, 8 or 16")
    src = Source(ctx, x, kept, red)
    ks = [f"ks{i}" for i in range(len(kept))]
    rs = [f"rs{i}" for i in range(len(red))]
    kx, rx = src.stride_params(kept, "b"), src.stride_params(red, "r")
    outs = ["out_ptr"] + (["idx_ptr"] if indexed and name in ("max", "min") else []) + \
        (["mean_ptr"] if name == "var_mean" else [])
    params = [*src.ptr_params(), *outs, "n_rows", "R", "correction", *ks, *sum(kx.values(), []), *rs,
              *sum(rx.values(), []), "BLOCK_O: tl.constexpr", "BLOCK_R: tl.constexpr"]
    init = {"sum": "0", "mean": "0", "var": "0", "prod": "1", "any": "0", "all": "1"}.get(kind) or \
        _extreme(kind, xv.dtype)
    load = src.load("m", init, acc if kind not in ("any", "all") else compute_type(xv.dtype), "        ")
    if kind in ("any", "all"):
        load.append("        v = (v != 0).to(tl.int32)")
    head = [
        "    o = tl.program_id(0).to(tl.int64) * BLOCK_O + tl.arange(0, BLOCK_O)",
        "    o_mask = o < n_rows",
        *decompose("o", ks, kx, "k"),
    ]
    step = [
        "        r = r0 + tl.arange(0, BLOCK_R)",
        *decompose("r", rs, rx, "q", indent="        "),
        "        m = o_mask[:, None] & (r < R)[None, :]",
        *load,
    ]
    # few outputs over long rows share each output among SPLIT programs on a GPU (not argmax/argmin)
    split = 1 if ctx.interpreter or acc not in PARTIAL_DTYPES else _split(n_out, rows_per_program, n_red)
    if kind in ("argmax", "argmin"):
        body = _arg_extreme_body(kind, init, acc, step)
        if name in ("max", "min"):
            body += ["    tl.store(out_ptr + o, _cast_out(best, out_ptr), mask=o_mask)",
                     "    tl.store(idx_ptr + o, best_i, mask=o_mask)"]
        else:
            body += ["    tl.store(out_ptr + o, best_i, mask=o_mask)"]
    elif kind == "var":
        if split > 1:
            _emit_split_var(ctx, node, kname, tag, name, red, src, params, head, step, acc, bo, br, warps, split,
                            _correction(kind, args))
            return
        body = [f"    acc = tl.zeros([BLOCK_O, BLOCK_R], {acc})", "    for r0 in range(0, R, BLOCK_R):", *step,
                "        acc += v", "    mean = tl.sum(acc, axis=1) / R",
                f"    acc = tl.zeros([BLOCK_O, BLOCK_R], {acc})", "    for r0 in range(0, R, BLOCK_R):", *step,
                "        d = tl.where(m, v - mean[:, None], 0.0)", "        acc += d * d",
                "    res = tl.sum(acc, axis=1) / (R - correction)",
                "    res = tl.where(R > 0, res, float('nan'))  # ATen: the variance of no element is NaN",
                "    tl.store(out_ptr + o, _cast_out(res, out_ptr), mask=o_mask)"]
        if name == "var_mean":
            body.append("    tl.store(mean_ptr + o, _cast_out(mean, mean_ptr), mask=o_mask)")
    elif split > 1:
        _emit_split(ctx, node, kname, tag, kind, name, red, src, params, head, step, init, acc, bo, br, warps, split)
        return
    else:
        update, partial = _combine_partial(kind, acc)
        body = [f"    acc = tl.full([BLOCK_O, BLOCK_R], {init}, {acc})", "    for r0 in range(0, R, BLOCK_R):",
                *step, f"        acc = {update}", f"    res = {partial}{FINISH[kind]}",
                "    tl.store(out_ptr + o, _cast_out(res, out_ptr), mask=o_mask)"]
    kernel = "\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {name} over dims {red}{src.what}",
                        *head, *body])
    ctx.kernels.append(kernel)
    vars_ = ctx.empty_outputs(node)
    launch = [*src.ptr_launch(), *vars_, f"{vars_[0]}.numel()", " * ".join(src.size(d) for d in red) or "1",
              ctx.sym(_correction(kind, args))]
    launch += _launch_tail(src, kept, red, bo, br, warps)
    ctx.launch(f"{kname}[(max(1, triton.cdiv({vars_[0]}.numel(), {bo})),)]", launch)
    _bind_outputs(ctx, node, vars_)


EMITTERS = {name: emit for name in KINDS}
