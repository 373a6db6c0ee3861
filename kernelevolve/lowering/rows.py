"""Row ops: softmax, log_softmax, logsumexp, layer norm and scans (cumsum, cumprod, logcumsumexp, cummax, cummin), each
row read in place.

A row is the set of elements that differ only along the op's dims (the softmax dim, the normalized
trailing dims, the scan dim). One program handles BLOCK_O rows and walks each row BLOCK_R elements at a
time: softmax in three passes (max, sum of exponentials, write), layer norm in three (mean, variance,
write), scans in one with a running carry. Input and output are addressed through their own strides.
On NVIDIA targets a softmax or layer norm whose row fits one BLOCK_R tile (up to 16384) reads it once:
the ONE_TILE branch keeps the row in registers between its statistics and its write.
On a GPU, a layer norm over few long rows (a (C, H, W) norm at batch 16) instead shares each row block
among SPLIT programs: chunk statistics, a combine kernel, then a chunk-wise normalize (split_stats.py).

Loop accumulators are whole tiles reduced after the loop, and a scan's carry is its chunk's last prefix,
never ``acc = acc + tl.sum(...)``: Triton 3.6's OptimizeThreadLocality pass asserts on that form when the
loop's result has other than one use (three-pass softmax, a scan's unused carry), and the kernel fails to
compile on a GPU ("PassManager::run failed") while the CPU interpreter runs it.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import torch
from torch.fx import Node

from kernelevolve.lowering import split_stats
from kernelevolve.lowering.context import Context, compute_type, packet, val
from kernelevolve.lowering.decompositions import layer_norm_stats_dtype
from kernelevolve.lowering.dots import SMS
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import decompose, norm_dims, schema_args
from kernelevolve.lowering.prologue import Source
from kernelevolve.lowering.reduction import _split

ACC = "tl.float32"
ONE_TILE_MAX = 16384  # longest row an NVIDIA draft keeps in registers (64 KiB of fp32 over 16 warps)


def _setup(ctx: Context, node: Node, red: list[int], name: str, n_out: int, one_tile: bool = False,
           y_value: object = None):
    """``y_value``: the output buffer's shape and dtype where they are not the node's (a reduction's keepdim
    buffer, which the kernel indexes by the input's dims)."""
    x = node.args[0]
    r = val(x).dim()
    kept = [d for d in range(r) if d not in red]
    kname = ctx.fresh(f"_{name}")
    tag = kname.lstrip("_").upper()
    xs = val(x).shape
    n_red = math.prod(ctx.hint(xs[d]) for d in red)
    n_rows = math.prod(ctx.hint(xs[d]) for d in kept)
    tiles = (ctx.block(n_rows, 1, 8, 32), ctx.block(n_red, 16, 128, 1024), 4)
    if one_tile and ctx.nvidia and n_red <= ONE_TILE_MAX:
        tiles = _one_tile_defaults(n_rows, n_red)
    bo = ctx.tunable(f"{tag}_BLOCK_O", tiles[0], "rows per program")
    br = ctx.tunable(f"{tag}_BLOCK_R", tiles[1], "row elements per step")
    warps = ctx.tunable(f"{tag}_WARPS", tiles[2], "1, 2, 4, 8 or 16")
    src = Source(ctx, x, kept, red)
    ks, rs = [f"ks{i}" for i in range(len(kept))], [f"rs{i}" for i in range(len(red))]
    kx, rx = src.stride_params(kept, "b"), src.stride_params(red, "r")
    ky, ry = [f"ky{i}" for i in range(len(kept))], [f"ry{i}" for i in range(len(red))]
    params = [*src.ptr_params(), "y_ptr", "n_rows", "R", *ks, *sum(kx.values(), []), *ky, *rs,
              *sum(rx.values(), []), *ry]
    head = ["    o = tl.program_id(0).to(tl.int64) * BLOCK_O + tl.arange(0, BLOCK_O)",
            "    o_mask = o < n_rows", *decompose("o", ks, {**kx, "yb": ky}, "k")]
    step = ["        r = r0 + tl.arange(0, BLOCK_R)", *decompose("r", rs, {**rx, "yr": ry}, "q", "        "),
            "        m = o_mask[:, None] & (r < R)[None, :]"]
    yvar = ctx.fresh("buf")
    out = y_value or (val(node)[0] if isinstance(val(node), (list, tuple)) else val(node))
    cast = _narrowing_cast(ctx, node)
    ctx.empty(yvar, node, out, val(cast).dtype if cast is not None else None)
    if cast is not None:  # the kernel stores in the cast's dtype (rounding as the cast would): no second pass
        ctx.bind(cast, yvar)
        ctx.done.add(cast.name)
    n_rows = " * ".join(src.size(d) for d in kept) or "1"
    launch = [*src.ptr_launch(), yvar, n_rows, " * ".join(src.size(d) for d in red) or "1"]
    launch += [src.size(d) for d in kept] + src.stride_launch(kept) + [f"{yvar}.stride({d})" for d in kept]
    launch += [src.size(d) for d in red] + src.stride_launch(red) + [f"{yvar}.stride({d})" for d in red]
    consts = [f"BLOCK_O={bo}", f"BLOCK_R={br}", f"num_warps={warps}"]
    if one_tile and ctx.nvidia:  # its parameter is added last, by _finish
        consts.insert(0, f"ONE_TILE={launch[len(src.ptr_params()) + 2]} <= {br}")
    grid = f"{kname}[(max(1, triton.cdiv({n_rows}, {bo})),)]"
    return kname, params, head, step, launch, consts, grid, yvar, src


def _narrowing_cast(ctx: Context, node: Node) -> Node | None:
    """The row op's only user when that is a dtype-only cast of its float32 output to half precision, run as
    its own kernel: a half-precision scan or softmax is traced as upcast, op, cast back, and storing the cast's
    dtype directly saves writing a float32 buffer and reading it again (the bf16 cumsum that did so ran 2.2x
    slower on an H100 than the retired template engine's single pass, ``aten_lowering_merge_h100.md``)."""
    users = [u for u in node.users if packet(u) != "_assert_tensor_metadata"]  # a check export adds: no value
    if isinstance(val(node), (list, tuple)) or len(users) != 1:
        return None
    (user,) = users
    if packet(user) not in ("_to_copy", "convert_element_type") or user.name in ctx.inline | ctx.prologue:
        return None
    if packet(user) == "_to_copy" and set(user.kwargs) - {"dtype"}:
        return None  # a layout, device or memory-format change as well
    narrowed = val(node).dtype == torch.float32 and val(user).dtype in (torch.float16, torch.bfloat16)
    return user if narrowed and tuple(val(user).shape) == tuple(val(node).shape) else None


def emit_softmax(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x = node.args[0]
    red = norm_dims(args["dim"], val(x).dim())
    log = packet(node) == "_log_softmax"
    kind = "log_softmax" if log else "softmax"
    kname, params, head, step, launch, consts, grid, y, src = _setup(ctx, node, red, kind, 1, one_tile=True)
    load = src.load("m", "float('-inf')", "tl.float32", "        ")
    write = "v - mx[:, None] - tl.log(s)[:, None]" if log else "tl.exp(v - mx[:, None]) / s[:, None]"
    single = ["        r0 = 0", *step, *load, "        mx = tl.max(v, axis=1)",
              "        s = tl.sum(tl.where(m, tl.exp(v - mx[:, None]), 0.0), axis=1)", f"        out = {write}",
              "        tl.store(y_ptr + yb[:, None] + yr[None, :], _cast_out(out, y_ptr), mask=m)"]
    body = ["    mx2 = tl.full([BLOCK_O, BLOCK_R], float('-inf'), tl.float32)", "    for r0 in range(0, R, BLOCK_R):",
            *step, *load, "        mx2 = tl.maximum(mx2, v)", "    mx = tl.max(mx2, axis=1)",
            "    s2 = tl.zeros([BLOCK_O, BLOCK_R], tl.float32)", "    for r0 in range(0, R, BLOCK_R):", *step,
            *load, "        s2 += tl.where(m, tl.exp(v - mx[:, None]), 0.0)", "    s = tl.sum(s2, axis=1)",
            "    for r0 in range(0, R, BLOCK_R):", *step, *load, f"        out = {write}",
            "        tl.store(y_ptr + yb[:, None] + yr[None, :], _cast_out(out, y_ptr), mask=m)"]
    if ctx.nvidia:
        body = _or_one_tile(single, body)
    _finish(ctx, node, kname, params, head, body, launch, consts, grid, y,
            f"{packet(node)} over dims {red}{src.what}")


def emit_logsumexp(ctx: Context, node: Node) -> None:
    """logsumexp as one row kernel, where its decomposition is four (max, shift, sum of exponentials, log):
    the row is read once where it fits one tile (NVIDIA), else twice (its max, then its shifted exponentials),
    always in fp32. The shift is the row's max, or 0 where that is infinite, as ATen has it: a row of -inf
    gives -inf, a row holding +inf gives +inf, and a NaN anywhere reaches the sum."""
    args = schema_args(node)
    x = node.args[0]
    rank = val(x).dim()
    red = norm_dims(args["dim"], rank) or list(range(rank))
    shape = [1 if d in red else size for d, size in enumerate(val(x).shape)]
    y_value = SimpleNamespace(shape=shape, dtype=val(node).dtype)
    kname, params, head, step, launch, consts, grid, y, src = _setup(ctx, node, red, "logsumexp", 1,
                                                                     one_tile=True, y_value=y_value)
    load = src.load("m", "float('-inf')", "tl.float32", "        ")
    shift = ["top = tl.where(tl.abs(mx) == float('inf'), 0.0, mx)"]
    finish = ["out = tl.log(s) + top", "tl.store(y_ptr + yb, _cast_out(out, y_ptr), mask=o_mask)"]
    single = ["        r0 = 0", *step, *load, "        mx = tl.max(v, axis=1)", *(f"        {t}" for t in shift),
              "        s = tl.sum(tl.where(m, tl.exp(v - top[:, None]), 0.0), axis=1)",
              *(f"        {t}" for t in finish)]
    body = ["    mx2 = tl.full([BLOCK_O, BLOCK_R], float('-inf'), tl.float32)", "    for r0 in range(0, R, BLOCK_R):",
            *step, *load, "        mx2 = tl.maximum(mx2, v)", "    mx = tl.max(mx2, axis=1)",
            *(f"    {t}" for t in shift),
            "    s2 = tl.zeros([BLOCK_O, BLOCK_R], tl.float32)", "    for r0 in range(0, R, BLOCK_R):", *step,
            *load, "        s2 += tl.where(m, tl.exp(v - top[:, None]), 0.0)", "    s = tl.sum(s2, axis=1)",
            *(f"    {t}" for t in finish)]
    if ctx.nvidia:
        body = _or_one_tile(single, body)
    _finish(ctx, node, kname, params, head, body, launch, consts, grid, y, f"logsumexp over dims {red}{src.what}",
            bind=False)
    if args.get("keepdim", False) or not red:
        ctx.bind(node, y)
    else:
        view = ctx.fresh("view")
        ctx.line(f"{view} = {y}.squeeze({tuple(red)!r})")
        ctx.bind(node, view)


_NORMALIZE = ["        out = (v - mean[:, None]) * rstd[:, None]",
              "        if HAS_W:",
              "            out = out * tl.load(w_ptr + r, mask=r < R, other=0).to(tl.float32)[None, :]",
              "        if HAS_B:",
              "            out = out + tl.load(b_ptr + r, mask=r < R, other=0).to(tl.float32)[None, :]",
              "        tl.store(y_ptr + yb[:, None] + yr[None, :], _cast_out(out, y_ptr), mask=m)"]


def emit_layer_norm(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x = node.args[0]
    r = val(x).dim()
    red = list(range(r - len(args["normalized_shape"]), r))
    split = _split_rows(ctx, x, red)
    users = {u.args[1] for u in node.users}
    stats = bool(users & {1, 2})
    normalize = _NORMALIZE if 0 in users else []  # statistics only (group norm's): no normalized write
    # unwritten, the normalized output is a one-element stand-in (its strides are launch arguments)
    unused = None if normalize else SimpleNamespace(shape=[1] * r, dtype=val(node)[0].dtype)
    kname, params, head, step, launch, consts, grid, y, src = _setup(ctx, node, red, "layer_norm", 3,
                                                                     one_tile=split == 1, y_value=unused)
    weight, bias = args.get("weight"), args.get("bias")
    mean_var, rstd_var = (ctx.fresh("buf"), ctx.fresh("buf")) if stats else (y, y)
    if stats:
        kind = layer_norm_stats_dtype(val(x).dtype)  # the target's device's, not the traced device's
        ctx.empty(mean_var, node, val(node)[1], kind)
        ctx.empty(rstd_var, node, val(node)[2], kind)
    ctx.multi[node.name] = [y, mean_var, rstd_var]
    wb = [ctx.tensor(weight) if weight is not None else y, ctx.tensor(bias) if bias is not None else y]
    flags = [f"HAS_W={weight is not None}", f"HAS_B={bias is not None}"]
    load = src.load("m", "0.0", "tl.float32", "        ")
    what = f"layer norm over dims {red}{src.what}"
    if split > 1:
        _emit_split_layer_norm(ctx, node, (kname, what, y, src), params, head, step + load, launch, consts,
                               [*wb, *flags], [mean_var, rstd_var, ctx.sym(args["eps"]), f"STATS={stats}"], split,
                               bool(normalize))
        return
    params += ["w_ptr", "b_ptr", "mean_ptr", "rstd_ptr", "eps", "HAS_W: tl.constexpr", "HAS_B: tl.constexpr",
               "STATS: tl.constexpr"]
    launch += [*wb, mean_var, rstd_var, ctx.sym(args["eps"]), *flags, f"STATS={stats}"]
    body = ["    acc = tl.zeros([BLOCK_O, BLOCK_R], tl.float32)", "    for r0 in range(0, R, BLOCK_R):", *step,
            *load, "        acc += v", "    mean = tl.sum(acc, axis=1) / R",
            "    acc = tl.zeros([BLOCK_O, BLOCK_R], tl.float32)", "    for r0 in range(0, R, BLOCK_R):", *step,
            *load, "        d = tl.where(m, v - mean[:, None], 0.0)", "        acc += d * d",
            "    rstd = 1.0 / tl.sqrt_rn(tl.sum(acc, axis=1) / R + eps)"]
    if normalize:
        body += ["    for r0 in range(0, R, BLOCK_R):", *step, *load, *normalize]
    single = ["        r0 = 0", *step, *load, "        mean = tl.sum(v, axis=1) / R",
              "        d = tl.where(m, v - mean[:, None], 0.0)",
              "        rstd = 1.0 / tl.sqrt_rn(tl.sum(d * d, axis=1) / R + eps)", *normalize]
    if ctx.nvidia:
        body = _or_one_tile(single, body)
    body += ["    if STATS:", "        tl.store(mean_ptr + o, _cast_out(mean, mean_ptr), mask=o_mask)",
            "        tl.store(rstd_ptr + o, _cast_out(rstd, rstd_ptr), mask=o_mask)"]
    _finish(ctx, node, kname, params, head, body, launch, consts, grid, y, what)


def _one_tile_defaults(n_rows: int, n_red: int) -> tuple[int, int, int]:
    """(BLOCK_O, BLOCK_R, warps) of an NVIDIA draft whose rows fit one tile: the whole row (a power of two),
    rows per program while the tile stays within 4096 elements and two waves of programs remain, and about
    16 elements a thread."""
    br = 16
    while br < n_red:
        br *= 2
    bo = 1
    while bo * 2 * br <= 4096 and n_rows // (bo * 2) >= 2 * SMS:
        bo *= 2
    return bo, br, min(16, max(4, bo * br // 512))


def _or_one_tile(single: list[str], loops: list[str]) -> list[str]:
    """The body as ``if ONE_TILE: single else: loops``: a row that fits BLOCK_R is read from memory once
    (kept in registers between its statistics and its write) instead of once per pass."""
    return ["    if ONE_TILE:  # the whole row in one tile: one read", *single, "    else:",
            *[f"    {line}" for line in loops]]


def _split_rows(ctx: Context, x: Node, red: list[int]) -> int:
    """Programs per row block for a layer norm over few long rows on a GPU; 1 (the one-program form) on
    the interpreter, whose drafts stay as they were."""
    if ctx.interpreter:
        return 1
    shape = val(x).shape
    n_rows = math.prod(ctx.hint(shape[d]) for d in range(len(shape)) if d not in red)
    n_red = math.prod(ctx.hint(shape[d]) for d in red)
    return _split(n_rows, ctx.block(n_rows, 1, 8, 32), n_red)


def _emit_split_layer_norm(ctx: Context, node: Node, op: tuple[str, str, str, Source], params: list[str],
                           head: list[str], loop: list[str], launch: list[str], consts: list[str],
                           affine: list[str], stats: list[str], split: int, normalize: bool = True) -> None:
    """Layer norm of few long rows in three kernels: SPLIT programs per row block each store their chunk's
    mean and M2, a combine kernel merges them into each row's mean and rstd (and the mean/rstd outputs), and
    SPLIT programs per row block normalize one chunk each: a 16-row layer norm runs on hundreds of programs
    instead of two. ``affine`` is [weight, bias, HAS_W=, HAS_B=]; ``stats`` [mean, rstd, eps, STATS=];
    ``normalize``: False where only the statistics are read (the third kernel is then not launched)."""
    kname, what, y, src = op
    tag = kname.lstrip("_").upper()
    split_name = ctx.tunable(f"{tag}_SPLIT", split, "programs sharing each row; a power of two")
    n_ptr = len(src.ptr_params())
    n_rows, reduced = launch[n_ptr + 1], launch[n_ptr + 2]
    chunk = split_stats.chunk(reduced, split_name, f"{tag}_BLOCK_R")
    sname = ctx.fresh("_row_stats")  # the normalize kernel's parameters, the partials in place of y
    sparams = ["part_ptr" if p == "y_ptr" else p for p in params]
    sparams.insert(sparams.index("R") + 1, "CHUNK")
    ctx.kernels.append(split_stats.chunk_stats_kernel(
        sname, sparams + ["BLOCK_O: tl.constexpr", "BLOCK_R: tl.constexpr"], head, loop, ACC, what))
    combine = ctx.fresh("_combine")
    cbo = ctx.tunable(f"{combine.lstrip('_').upper()}_BLOCK_O", 16, "rows per program")
    finish = ["    rstd = 1.0 / tl.sqrt_rn(m2 / R + eps)", "    tl.store(st_ptr + o, mean, mask=o_mask)",
              "    tl.store(st_ptr + n_rows + o, rstd, mask=o_mask)", "    if STATS:",
              "        tl.store(mean_ptr + o, _cast_out(mean, mean_ptr), mask=o_mask)",
              "        tl.store(rstd_ptr + o, _cast_out(rstd, rstd_ptr), mask=o_mask)"]
    ctx.kernels.append(split_stats.combine_kernel(combine, ["st_ptr", "mean_ptr", "rstd_ptr"],
                                                  ["eps", "STATS: tl.constexpr"], finish, ACC, what))
    part = split_stats.partials(ctx, split_name, n_rows)
    st = ctx.fresh("buf")
    ctx.line(f"{st} = torch.empty((2, {n_rows}), dtype=torch.float32, device={ctx.device})")
    slaunch = [*launch[:n_ptr], part, n_rows, reduced, chunk, *launch[n_ptr + 3:]]
    grid = f"(max(1, triton.cdiv({n_rows}, {tag}_BLOCK_O)), {split_name})"
    ctx.launch(f"{sname}[{grid}]", slaunch + consts)
    ctx.launch(f"{combine}[(max(1, triton.cdiv({n_rows}, {cbo})),)]",
               [part, st, *stats[:2], n_rows, reduced, chunk, *stats[2:], f"SPLIT={split_name}", f"BLOCK_O={cbo}"])
    if not normalize:
        ctx.bind(node, y)
        return
    body = ["    mean = tl.load(st_ptr + o, mask=o_mask, other=0)",
            "    rstd = tl.load(st_ptr + n_rows + o, mask=o_mask, other=0)",
            "    r_lo = tl.program_id(1).to(tl.int64) * CHUNK",
            "    for r0 in range(r_lo, r_lo + CHUNK, BLOCK_R):", *loop, *_NORMALIZE]
    params = params + ["st_ptr", "w_ptr", "b_ptr", "CHUNK", "HAS_W: tl.constexpr", "HAS_B: tl.constexpr"]
    _finish(ctx, node, kname, params, head, body, [*launch, st, *affine[:2], chunk, *affine[2:]], consts,
            f"{kname}[{grid}]", y, f"{what}: one chunk normalized")


_SCANS = {  # op: (identity, the chunk's scan with the carry folded in); logcumsumexp's scan is _tile_scan's
    "cumsum": ("0", ["        c = tl.cumsum(v, axis=1) + carry[:, None]"]),
    "cumprod": ("1", ["        c = tl.cumprod(v, axis=1) * carry[:, None]"]),
    "logcumsumexp": ("float('-inf')", ["        c = _logaddexp_combine(carry[:, None], c)"]),
}
_LAST = "(r == r0 + BLOCK_R - 1)[None, :]"  # the chunk's last column: its prefix is the next chunk's carry


def _tile_scan(ctx: Context, combine: str, tiles: list[str]) -> list[str]:
    """Lines replacing each [BLOCK_O, BLOCK_R] tile in ``tiles`` by its inclusive scan along axis 1 under
    ``combine`` (a @triton.jit taking two tuples of len(tiles) values, the earlier first).

    NVIDIA drafts use tl.associative_scan. Elsewhere the scan doubles its reach log2(BLOCK_R) times through
    tl.gather (Hillis-Steele), because Triton's CPU interpreter runs an associative_scan with a custom
    combine one element at a time in Python (27 s for one 49k-element cummin forward) and the doubling
    form in a fraction of a second; the two give the same result for an associative combine."""
    names = ", ".join(tiles)
    if ctx.nvidia:
        packed = f"({names})" if len(tiles) > 1 else names
        return [f"        {names} = tl.associative_scan({packed}, 1, {combine})"]
    shifted = ", ".join(f"tl.gather({n}, src, 1)" for n in tiles)
    news = [f"n{n}" for n in tiles]
    return ["        for kk in tl.static_range(16):",
            "            if (1 << kk) < BLOCK_R:",
            "                at = tl.arange(0, BLOCK_R)",
            "                src = tl.broadcast_to(tl.maximum(at - (1 << kk), 0)[None, :], [BLOCK_O, BLOCK_R])",
            f"                {', '.join(news)} = {combine}({shifted}, {names})",
            *[f"                {n} = tl.where((at >= (1 << kk))[None, :], n{n}, {n})" for n in tiles]]


def emit_scan(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x = node.args[0]
    red = norm_dims(args["dim"], val(x).dim())
    kname, params, head, step, launch, consts, grid, y, src = _setup(ctx, node, red, packet(node), 1)
    acc = compute_type(val(node).dtype)
    init, scan = _SCANS[packet(node)]
    if packet(node) == "logcumsumexp":
        scan = ["        c = v", *_tile_scan(ctx, "_logaddexp_combine", ["c"]), *scan]
    body = [f"    carry = tl.full([BLOCK_O], {init}, {acc})", "    for r0 in range(0, R, BLOCK_R):", *step,
            *src.load("m", init, acc, "        "), *scan,
            "        tl.store(y_ptr + yb[:, None] + yr[None, :], _cast_out(c, y_ptr), mask=m)",
            f"        carry = tl.sum(tl.where({_LAST}, c, tl.zeros_like(c)), axis=1)"]
    _finish(ctx, node, kname, params, head, body, launch, consts, grid, y,
            f"{packet(node)} along dims {red}{src.what}")


def emit_indexed_scan(ctx: Context, node: Node) -> None:
    """cummax / cummin: values and int64 indices, one associative scan over (value, index) pairs per chunk
    with torch's rules (a later element wins a tie; a NaN wins and holds), the carry folded in the same way."""
    args = schema_args(node)
    x = node.args[0]
    red = norm_dims(args["dim"], val(x).dim())
    name = packet(node)
    acc, init = _indexed_scan_type(val(x).dtype, name)
    kname, params, head, step, launch, consts, grid, y, src = _setup(ctx, node, red, name, 2)
    yi = ctx.fresh("buf")
    ctx.empty(yi, node, val(node)[1])
    combine = f"_{name}_combine"
    body = [f"    cv = tl.full([BLOCK_O], {init}, {acc})", "    ci = tl.zeros([BLOCK_O], tl.int64)",
            "    for r0 in range(0, R, BLOCK_R):", *step, *src.load("m", init, acc, "        "),
            "        c = v", "        ic = tl.broadcast_to(r[None, :].to(tl.int64), [BLOCK_O, BLOCK_R])",
            *_tile_scan(ctx, combine, ["c", "ic"]),
            f"        c, ic = {combine}(cv[:, None], ci[:, None], c, ic)",
            "        tl.store(y_ptr + yb[:, None] + yr[None, :], _cast_out(c, y_ptr), mask=m)",
            "        tl.store(yi_ptr + yb[:, None] + yr[None, :], ic, mask=m)",
            f"        cv = tl.sum(tl.where({_LAST}, c, tl.zeros_like(c)), axis=1)",
            f"        ci = tl.sum(tl.where({_LAST}, ic, tl.zeros_like(ic)), axis=1)"]
    _finish(ctx, node, kname, params + ["yi_ptr"], head, body, launch + [yi], consts, grid, y,
            f"{name} along dims {red}{src.what}", bind=False)
    ctx.multi[node.name] = [y, yi]  # the indices' buffer has the values' shape: one set of y strides serves both


def _indexed_scan_type(dtype: torch.dtype, name: str) -> tuple[str, str]:
    """(compute type, the scan's identity) of cummax/cummin on ``dtype``: floats in fp32 (fp64 for fp64) from
    -inf/inf; integers and bool in int64 from the dtype's least/greatest value, so every comparison is exact."""
    if dtype.is_floating_point:
        return compute_type(dtype), "float('-inf')" if name == "cummax" else "float('inf')"
    if dtype.is_complex:
        raise LoweringError(f"no Triton lowering for aten.{name} of {dtype}")
    info = torch.iinfo(dtype) if dtype != torch.bool else None
    lowest, highest = (info.min, info.max) if info else (0, 1)
    return "tl.int64", str(lowest if name == "cummax" else highest)


def _finish(ctx: Context, node: Node, kname: str, params: list[str], head: list[str], body: list[str],
            launch: list[str], consts: list[str], grid: str, y: str, what: str, bind: bool = True) -> None:
    one_tile = ["ONE_TILE: tl.constexpr"] if any(c.startswith("ONE_TILE=") for c in consts) else []
    params = params + one_tile + ["BLOCK_O: tl.constexpr", "BLOCK_R: tl.constexpr"]
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}",
                                  *head, *body]))
    ctx.launch(grid, launch + consts)
    if bind:
        ctx.bind(node, y)


EMITTERS = {"_softmax": emit_softmax, "_log_softmax": emit_softmax, "logsumexp": emit_logsumexp,
            "native_layer_norm": emit_layer_norm, "cumsum": emit_scan, "cumprod": emit_scan,
            "logcumsumexp": emit_scan, "cummax": emit_indexed_scan, "cummin": emit_indexed_scan}
