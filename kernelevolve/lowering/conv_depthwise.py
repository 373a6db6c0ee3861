"""Depthwise convolution template (NVIDIA targets): a direct weighted stencil, no tensor-core dot.

Why: with one input channel per group (``groups == in_channels``) the implicit GEMM of conv.py pads each
group's 1 x COG product to tiles of at least 16 channels, so 15/16 of its work is wasted (0.06x of
torch.compile on a 3x3 depthwise conv). Here each output is a sum over the kernel taps, as in pool.py:
a program owns ROWS (batch, output channel) rows by BLOCK_S flattened output positions; a
``tl.static_range`` over the taps (kernel sizes are compile-time constants of the launch) loads one weight
per row and the shifted input tile, accumulating in fp32; bias and any fused pointwise chain (epilogue.py)
are applied before the one store. A channel multiplier (COG output channels per group) reads input channel
co // COG. Index math is hoisted out of the tap loop: each tap adds a scalar offset to one pointer tile.
"""

from __future__ import annotations

import math

from torch.fx import Node

from kernelevolve.lowering import epilogue
from kernelevolve.lowering.context import Context, val
from kernelevolve.lowering.indexing import GUARD_PARAM, guard_tunable, padded_load, schema_args


def applies(ctx: Context, node: Node) -> bool:
    """A 1-3d, non-transposed conv with integer stride/padding/dilation and one input channel per group."""
    args = schema_args(node)
    if bool(args["transposed"]):
        return False
    stride, padding, dilation = list(args["stride"]), list(args["padding"]), list(args["dilation"])
    if not all(isinstance(v, int) for v in stride + padding + dilation + [args["groups"]]):
        return False
    s = len(stride)
    x, w = val(args["input"]), val(args["weight"])
    if not 1 <= s <= 3 or x.dim() != s + 2 or w.dim() != s + 2 or len(padding) != s or len(dilation) != s:
        return False
    return isinstance(w.shape[1], int) and w.shape[1] == 1


def _affine(var: str, scale: int, shift: int) -> str:
    """``var * scale + shift`` as kernel text, leaving out a unit scale and a zero shift."""
    text = var if scale == 1 else f"{var} * {scale}"
    return text if shift == 0 else f"{text} {'-' if shift < 0 else '+'} {abs(shift)}"


def emit(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x, w, bias = args["input"], args["weight"], args.get("bias")
    stride, padding, dilation = list(args["stride"]), list(args["padding"]), list(args["dilation"])
    groups = args["groups"]
    s = len(stride)
    sp = range(s)
    kname = ctx.fresh("_dwconv")
    tag = kname.lstrip("_").upper()
    out_v = val(node)
    rows_hint = ctx.hint(out_v.shape[0]) * ctx.hint(out_v.shape[1])
    bs_val = ctx.block(math.prod(ctx.hint(o) for o in out_v.shape[2:]), 16, 512)
    rows_val = min(ctx.block(rows_hint, 1, 64), max(1, 2048 // bs_val))
    bs = ctx.tunable(f"{tag}_BLOCK_S", bs_val, "flattened output positions per program; a power of two >= 16")
    rows = ctx.tunable(f"{tag}_ROWS", rows_val, "(batch, channel) rows per program; a power of two")
    warps = ctx.tunable(f"{tag}_WARPS", 4, "1, 2, 4, 8 or 16")
    guard = guard_tunable(ctx, tag)
    index = ["nb[:, None]", "co[:, None]"] + [f"q{d}[None, :]" for d in sp]
    out, group, epi = epilogue.fused_output(ctx, node, index, "cmask", "[ROWS, BLOCK_S]")
    params = ["x_ptr", "w_ptr", "b_ptr", "y_ptr", "R", *ctx.sizes(["C", "COG", "S", "NS"] + [f"I{d}" for d in sp] +
                                                                  [f"O{d}" for d in sp])]
    params += ["sxn", "sxc"] + [f"sx{d}" for d in sp] + ["swo"] + [f"sw{d}" for d in sp]
    params += ["syn", "syc"] + [f"sy{d}" for d in sp] + (epi.params if epi else [])
    params += [f"K{d}: tl.constexpr" for d in sp]
    params += ["HAS_BIAS: tl.constexpr", "ROWS: tl.constexpr", "BLOCK_S: tl.constexpr", GUARD_PARAM]
    lines = ["    pid = tl.program_id(0)",
             "    r = (pid // NS).to(tl.int64) * ROWS + tl.arange(0, ROWS)",
             "    p = (pid % NS) * BLOCK_S + tl.arange(0, BLOCK_S)",
             "    r_mask = r < R", "    s_mask = p < S", "    co = r % C", "    nb = r // C", "    rem = p"]
    for d in reversed(sp):
        lines += [f"    o{d} = rem % O{d}", f"    rem = rem // O{d}"] if d else [f"    o{d} = rem"]
    lines += [f"    b{d} = {_affine(f'o{d}', stride[d], -padding[d])}" for d in sp]
    x_sp = " + ".join(f"b{d}.to(tl.int64) * sx{d}" for d in sp)
    lines += [f"    xp = x_ptr + (nb * sxn + (co // COG) * sxc)[:, None] + ({x_sp})[None, :]",
              "    wp = w_ptr + co * swo",
              "    acc = tl.zeros([ROWS, BLOCK_S], dtype=tl.float32)"]
    valid = "s_mask"
    for d in sp:  # nested static loops: the tap's per-dim validity is computed once per enclosing tap
        ind = "    " * (d + 1)
        lines += [f"{ind}for k{d} in tl.static_range(K{d}):",
                  f"{ind}    i{d} = b{d} + {_affine(f'k{d}', dilation[d], 0)}",
                  f"{ind}    ok{d} = {valid} & (i{d} >= 0) & (i{d} < I{d})"]
        valid = f"ok{d}"
    ind = "    " * (s + 1)
    w_tap = " + ".join(f"k{d} * sw{d}" for d in sp)
    x_tap = " + ".join(f"({_affine(f'k{d}', dilation[d], 0)}) * sx{d}" for d in sp)
    lines += [f"{ind}wv = tl.load(wp + {w_tap}, mask=r_mask, other=0.0).to(tl.float32)",
              f"{ind}xm = r_mask[:, None] & {valid}[None, :]",
              f"{ind}xv = {padded_load(f'xp + {x_tap}', 'xp', 'xm', '0.0')}",
              f"{ind}acc += xv.to(tl.float32) * wv[:, None]"]
    lines += ["    cmask = r_mask[:, None] & s_mask[None, :]", "    if HAS_BIAS:",
              "        acc += tl.load(b_ptr + co, mask=r_mask, other=0.0).to(tl.float32)[:, None]"]
    lines += [f"    q{d} = o{d}.to(tl.int64)" for d in sp]
    lines += [f"    {line}" for line in epi.lines] if epi else []
    y_sp = " + ".join(f"q{d} * sy{d}" for d in sp)
    result = epi.result if epi else "acc"
    lines.append(f"    tl.store(y_ptr + (nb * syn + co * syc)[:, None] + ({y_sp})[None, :], "
                 f"_cast_out({result}, y_ptr), mask=cmask)")
    what = f"depthwise conv{s}d stride={stride} padding={padding} dilation={dilation} groups={groups}"
    what = epilogue.label(what, group)
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}", *lines]))
    xv, wv = ctx.tensor(x), ctx.tensor(w)
    if epi:
        for line in epi.host:
            ctx.line(line)
    rows_total = f"{out}.shape[0] * {out}.shape[1]"
    spatial = " * ".join(f"{out}.shape[{2 + d}]" for d in sp)
    ns = f"max(1, triton.cdiv({spatial}, {bs}))"
    launch = [xv, wv, ctx.tensor(bias) if bias is not None else out, out, rows_total, f"{out}.shape[1]",
              f"{out}.shape[1] // {groups}", spatial, ns]
    launch += [f"{xv}.shape[{2 + d}]" for d in sp] + [f"{out}.shape[{2 + d}]" for d in sp]
    launch += [f"{xv}.stride({d})" for d in range(2 + s)] + [f"{wv}.stride(0)"]
    launch += [f"{wv}.stride({2 + d})" for d in sp] + [f"{out}.stride({d})" for d in range(2 + s)]
    launch += (epi.launch if epi else []) + [f"K{d}={wv}.shape[{2 + d}]" for d in sp]
    launch += [f"HAS_BIAS={bias is not None}", f"ROWS={rows}", f"BLOCK_S={bs}", f"GUARD={guard}", f"num_warps={warps}"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({rows_total}, {rows})) * {ns},)]", launch)
    epilogue.bind_output(ctx, node, group, out)
