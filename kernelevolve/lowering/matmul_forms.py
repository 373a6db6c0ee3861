"""NVIDIA forms of the matmul template (matmul.py) for shapes its one-program-per-tile kernel serves badly.

Split-K, for a long K under a small output (256 x 256 with K = 131072): the tiles alone are a few dozen
programs, each walking all of K, so most SMs idle (0.17x of cuBLAS on an H200). With ``{tag}_SPLIT_K`` above
1, grid axis 1 cuts K into SPLIT_K slices of whole BLOCK_K steps; each program stores its tile's raw fp32 sum
over its slice to a partial buffer [SPLIT_K, batch, M, N], and a second kernel adds the slices in a fixed
order (deterministic: no atomics), then applies alpha, addmm's bias and the fused epilogue, casts and
stores. At SPLIT_K = 1 the matmul kernel is the one-pass kernel it always was (the split is a constexpr).

GEMV, for N == 1 (a matrix times a column) or M == 1 (a row times a matrix): a tl.dot pads the 1 to 16 and
the product is memory bound anyway (8192 x 8192 reads 256 MB). Each program owns BLOCK_R outputs and walks K
in BLOCK_K chunks, multiplying a [BLOCK_R, BLOCK_K] tile of the matrix by a chunk of the vector in fp32
registers (IEEE products, no TF32); the [BLOCK_R, BLOCK_K] accumulator sums K in K_GROUP-step partials as
the matmul does, so each lane adds K / BLOCK_K terms before one tree sum across the lanes: a long K stays
as exact as cuBLAS. The epilogue is fused as in the matmul.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.fx import Node

from kernelevolve.lowering import dots, epilogue
from kernelevolve.lowering.context import Context, packet, val
from kernelevolve.lowering.source_text import wrap_call

MAX_SPLIT = 64  # the search's range of a count tunable (operators/tunables.py)
MIN_SLICE = 256  # K of one slice at the default SPLIT_K: 8 BLOCK_K steps of 32
SUM_TILE = 32  # outputs per program of the split-K sum, along M and along N
_PARTIAL = "((tl.program_id(1) * tl.num_programs(2) + pid_b) * M + rm[:, None]) * N + rn[None, :]"


# --- the output buffer and its fused epilogue (shared with matmul.emit) ------------------------------------
def output(ctx: Context, node: Node) -> tuple[str, str, Any, Node, str | None]:
    """(buffer, store target, epilogue group or None, the node the group reads, reshape of the tile or None):
    the output is the group's root when a pointwise chain is fused, stored through the reshape it reads."""
    out = ctx.fresh("buf")
    found = epilogue.find(ctx, node, through_views=True)
    group, anchor = found if found else (None, node)
    ctx.empty(out, group.root if group else node)
    tile_shape = ctx.shape(val(node)) if anchor is not node else None
    store = out
    if tile_shape:  # the chain is read through a reshape of the product: store through the same reshape
        store = ctx.fresh("tile")
        ctx.line(f"{store} = {out}.view({tile_shape})")
    return out, store, group, anchor, tile_shape


# --- split-K -----------------------------------------------------------------------------------------------
def split_k_tiles(m: int, n: int, k: int, batch: int) -> tuple[int, int, int, int] | None:
    """(BLOCK_M, BLOCK_N, warps, SPLIT_K) when K is long (>= 8 x max(M, N)) and the covering tiles (up to
    128 x 128) are under two waves of programs: full tiles keep tensor cores busy, and SPLIT_K doubles until
    two waves (at most MAX_SPLIT, slices of at least MIN_SLICE). None: no split (dots.gpu_tiles' tiles)."""
    bm, bn, warps = dots.gpu_tiles(m, n, 2 * dots.SMS)  # enough programs per tile: the tiles are not shrunk
    tiles = -(-m // bm) * -(-n // bn) * batch
    if k < 8 * max(m, n) or tiles >= 2 * dots.SMS:
        return None
    split = 1
    while tiles * split < 2 * dots.SMS and split < MAX_SPLIT and k // (2 * split) >= MIN_SLICE:
        split *= 2
    return (bm, bn, warps, split) if split > 1 else None


def slice_lines() -> list[str]:
    """Matmul kernel lines bounding its K loop (``range(k_lo, k_hi, ...)``) to this program's slice."""
    return ["    k_lo = 0",
            "    k_hi = K",
            "    if SPLIT_K > 1:  # slice tl.program_id(1) of K, whole BLOCK_K steps (the masks stay rk < K)",
            "        k_per = tl.cdiv(tl.cdiv(K, SPLIT_K), BLOCK_K) * BLOCK_K",
            "        k_lo = tl.program_id(1) * k_per",
            "        k_hi = tl.minimum(K, k_lo + k_per)"]


def split_tail(tail: list[str]) -> list[str]:
    """The matmul kernel's ending: with SPLIT_K > 1 the slice's raw fp32 sum to the partial buffer, else
    ``tail`` (alpha, bias, epilogue and store) as in the one-pass kernel."""
    return ["    if SPLIT_K > 1:  # the splitk_sum kernel adds the slices, then alpha, bias and the epilogue",
            f"        tl.store(p_ptr + {_PARTIAL}, acc, mask=cmask)",
            "    else:",
            *(f"    {line}" for line in tail)]


def emit_split_sum(ctx: Context, split: str, partial: str, sizes: tuple[str, str, str], args: list[str],
                   epi_params: list[str], tail: list[str], has_bias: bool) -> None:
    """The combine kernel (``tail`` after the sum of the SPLIT_K partials) and its launch, run only when
    ``split`` > 1; ``sizes``: M, N, batch; ``args``: store, bias, M, N, the store's and the bias's strides,
    beta, alpha, the epilogue's. Its tiles are SUM_TILE square whatever the matmul's (a 128 x 128 tile would
    leave a 256 x 256 output to four programs reading all the partials)."""
    name = ctx.fresh("_splitk_sum")
    params = ["p_ptr", "c_ptr", "bias_ptr", "M", "N", "scb", "scm", "scn", "sbm", "sbn_", "beta", "alpha",
              *epi_params, "HAS_BIAS: tl.constexpr", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr",
              "SPLIT_K: tl.constexpr"]
    ctx.kernels.append("\n".join([
        "@triton.jit",
        f"def {name}({', '.join(params)}):",
        "    # split-K matmul: its K slices' fp32 partial sums added in a fixed order (no atomics), then its ending",
        "    pid_b = tl.program_id(2).to(tl.int64)",
        "    rm = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)",
        "    rn = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)",
        "    cmask = (rm[:, None] < M) & (rn[None, :] < N)",
        "    part = p_ptr + (pid_b * M + rm[:, None]) * N + rn[None, :]",
        "    slice_size = tl.num_programs(2).to(tl.int64) * M * N",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "    for s in range(SPLIT_K):",
        "        acc += tl.load(part + s * slice_size, mask=cmask, other=0.0)",
        *tail,
    ]))
    m, n, batch = sizes
    grid = f"(max(1, triton.cdiv({m}, {SUM_TILE})), max(1, triton.cdiv({n}, {SUM_TILE})), {batch})"
    ctx.line(f"if {split} > 1:  # add the K slices")
    keywords = [f"HAS_BIAS={has_bias}", f"BLOCK_M={SUM_TILE}", f"BLOCK_N={SUM_TILE}", f"SPLIT_K={split}",
                "num_warps=4"]
    call = wrap_call(f"    {name}[{grid}]", [partial, *args, *keywords], indent="        ", width=104)
    ctx.forward.extend(call.split("\n"))


# --- GEMV --------------------------------------------------------------------------------------------------
def gemv_side(a_shape: Any, b_shape: Any, batched: bool) -> str:
    """'n' when B is one column (N == 1), 'm' when A is one row (M == 1), '' otherwise; only sizes the trace
    fixed at 1 count (export specializes 0 and 1, and the draft then refuses other sizes)."""
    def one(size: Any) -> bool:
        return not isinstance(size, torch.SymInt) and int(size) == 1

    if batched:
        return ""
    return "n" if one(b_shape[-1]) else "m" if one(a_shape[-2]) else ""


def emit_gemv(ctx: Context, node: Node, side: str, a: Node, b: Node, bias: Node | None, beta: Any,
              alpha: Any) -> None:
    """mm / addmm with N == 1 (``side`` 'n': rows of A times the column B) or M == 1 ('m': columns of B
    times the row A) as a row reduction: output r = sum over k of mat[r, k] * vec[k]."""
    name = packet(node)
    kname = ctx.fresh("_gemv")
    tag = kname.lstrip("_").upper()
    a_val, b_val = val(a), val(b)
    k_size = a_val.shape[-1]
    k_stride = a_val.stride(-1) if side == "n" else b_val.stride(-2)
    # K-contiguous rows: chunks of 256 along K (vector loads); else the rows are the contiguous dim: wider
    r_val, k_val = (16, ctx.block(k_size, 16, 256)) if ctx.hint(k_stride) == 1 else (64, ctx.block(k_size, 16, 64))
    br = ctx.tunable(f"{tag}_BLOCK_{'M' if side == 'n' else 'N'}", r_val, "outputs per program; >= 16")
    bk = ctx.tunable(f"{tag}_BLOCK_K", k_val, "reduction chunk; a power of two >= 16")
    warps = ctx.tunable(f"{tag}_WARPS", 4, "1, 2, 4, 8 or 16")
    out, store, group, anchor, tile_shape = output(ctx, node)
    index = ["rr", "0"] if side == "n" else ["0", "rr"]
    epi = epilogue.build(ctx, group, anchor, index, "rmask", "[BLOCK_R]", out, tile_shape) if group else None
    params = ["m_ptr", "v_ptr", "c_ptr", "bias_ptr", "R", "K", "smr", "smk", "svk", "scr", "sbr", "beta", "alpha",
              *(epi.params if epi else []), "HAS_BIAS: tl.constexpr", "BLOCK_R: tl.constexpr",
              "BLOCK_K: tl.constexpr", "K_GROUP: tl.constexpr"]
    fused = epilogue.label("", group)
    ctx.kernels.append("\n".join([
        "@triton.jit",
        f"def {kname}({', '.join(params)}):",
        f"    # {name} with {'N' if side == 'n' else 'M'} == 1 as a matrix-vector product{fused}",
        "    rr = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)",
        "    rmask = rr < R",
        "    m_base = m_ptr + rr[:, None] * smr",
        "    acc = tl.zeros((BLOCK_R, BLOCK_K), dtype=tl.float32)",
        "    for k1 in range(0, K, BLOCK_K * K_GROUP):  # K_GROUP chunks summed apart, then added: fp32 error",
        "        part = tl.zeros((BLOCK_R, BLOCK_K), dtype=tl.float32)",
        "        for k0 in range(k1, tl.minimum(k1 + BLOCK_K * K_GROUP, K), BLOCK_K):",
        "            rk = k0 + tl.arange(0, BLOCK_K)",
        "            x = tl.load(m_base + rk[None, :] * smk, mask=rmask[:, None] & (rk[None, :] < K), other=0.0)",
        "            v = tl.load(v_ptr + rk * svk, mask=rk < K, other=0.0)",
        "            part += x.to(tl.float32) * v.to(tl.float32)[None, :]",
        "        acc += part",
        "    acc = tl.sum(acc, axis=1) * alpha",
        "    if HAS_BIAS:",
        "        acc += beta * tl.load(bias_ptr + rr * sbr, mask=rmask, other=0.0).to(tl.float32)",
        *(f"    {line}" for line in (epi.lines if epi else [])),
        f"    tl.store(c_ptr + rr * scr, _cast_out({epi.result if epi else 'acc'}, c_ptr), mask=rmask)",
    ]))
    av, bv = ctx.tensor(a), ctx.tensor(b)
    for line in epi.host if epi else []:
        ctx.line(line)
    if bias is not None:
        ctx.line(f"bias_view = {ctx.tensor(bias)}.expand({av}.shape[0], {bv}.shape[1])")
    if side == "n":  # rows of A (stride 0 along the rows, 1 along K), the column B, output column 0
        mat, vec, dims = av, bv, [f"{av}.shape[0]", f"{av}.shape[1]", f"{av}.stride(0)", f"{av}.stride(1)",
                                  f"{bv}.stride(0)", f"{store}.stride(0)"]
    else:  # columns of B (stride 1 along the outputs, 0 along K), the row A, output row 0
        mat, vec, dims = bv, av, [f"{bv}.shape[1]", f"{bv}.shape[0]", f"{bv}.stride(1)", f"{bv}.stride(0)",
                                  f"{av}.stride(1)", f"{store}.stride(1)"]
    axis = 0 if side == "n" else 1
    launch = [mat, vec, store, ctx.tensor(bias) if bias is not None else out, *dims,
              f"bias_view.stride({axis})" if bias is not None else "0", ctx.sym(beta), ctx.sym(alpha),
              *(epi.launch if epi else []), f"HAS_BIAS={bias is not None}", f"BLOCK_R={br}", f"BLOCK_K={bk}",
              f"K_GROUP={dots.K_GROUP} if {mat}.dtype == torch.float32 else 1 << 20", f"num_warps={warps}"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({dims[0]}, {br})),)]", launch)
    epilogue.bind_output(ctx, node, group, out)
