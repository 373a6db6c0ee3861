"""The stride-phase form of a transposed convolution, for NVIDIA targets (dilation 1 in every dim).

conv.py's implicit GEMM runs a transposed conv's K loop over every (input channel, kernel tap) pair and
masks the taps where ``o + padding - k`` is not a multiple of the stride: with stride 2 in 2-d three quarters
of the tensor-core work is thrown away (7/8 in 3-d), and every gathered element pays an integer div/mod.
Here the output positions split into phases ``r = o mod stride`` (per dim). In phase r the taps that land
are exactly ``k = t0 + stride * j`` with ``t0 = (r + padding) mod stride``, and their input index is
``i = q + sh - j`` (``o = r + stride * q``, ``sh = (r + padding) // stride``), exact: each phase is an
ordinary stride-1 gather conv over its own taps. One launch covers all phases: the grid's third axis is
(group, phase) and a program's rows are positions of one phase, so its K loop runs over that phase's taps
and BLOCK_K contiguous input channels of the group (as in conv_nhwc.py, but one flat loop so the loads
pipeline across taps), with scalar index arithmetic only. The kernel reads everything through strides; a
``*_CHANNELS_LAST`` flag first copies the input and the weight (``[C_in, C_out / groups, k...]``: K is dim
0) channels-last, so both loads are contiguous along K. Bias and a fused pointwise epilogue are applied to
the tile as in conv.py. Dilated transposed convs keep conv.py's masked gather.
"""

from __future__ import annotations

import math

from torch.fx import Node

from kernelevolve.lowering import dots, epilogue
from kernelevolve.lowering.context import Context, val
from kernelevolve.lowering.indexing import schema_args


def applies(node: Node) -> bool:
    """A transposed conv with integer stride/padding/groups and dilation 1 in every dim."""
    args = schema_args(node)
    if not args.get("transposed"):
        return False
    stride, padding, dilation = list(args["stride"]), list(args["padding"]), list(args["dilation"])
    if not all(isinstance(v, int) for v in stride + padding + dilation + [args["groups"]]):
        return False
    if not all(v == 1 for v in dilation) or not all(v >= 1 for v in stride):
        return False
    return math.prod(stride) * args["groups"] < 65536  # (group, phase) pairs fit the grid's third axis


def _kernel_lines(ctx: Context, sp: range, stride: list[int], padding: list[int]) -> list[str]:
    """Tile setup (group, phase, rows of the phase) and the K loop over (phase tap, channel chunk)."""
    phases = math.prod(stride)
    lines = [f"    pid = tl.program_id(2)  # group * {phases} + phase",
             f"    g = (pid // {phases}).to(tl.int64)", f"    ph = pid % {phases}"]
    for d in reversed(sp):
        lines += [f"    r{d} = ph % {stride[d]}", f"    ph = ph // {stride[d]}"]
    lines += ["    rm = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)",
              "    rn = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)",
              "    n_mask = rn < COG", "    co = g * COG + rn", "    m_mask = rm < MQ", "    rem = rm"]
    for d in reversed(sp):
        lines += [f"    q{d} = rem % Q{d}", f"    rem = rem // Q{d}"]
    lines.append("    nb = rem")
    for d in sp:  # o = r + stride * q; taps k = t + stride * j; input i = q + sh - j
        lines += [f"    o{d} = r{d} + {stride[d]} * q{d}", f"    m_mask = m_mask & (o{d} < O{d})",
                  f"    t{d} = (r{d} + {padding[d]}) % {stride[d]}",
                  f"    sh{d} = (r{d} + {padding[d]}) // {stride[d]}",
                  f"    J{d} = (K{d} - t{d} + {stride[d] - 1}) // {stride[d]}"]
    lines += ["    x_base = nb * sxn + g * CIG * sxc", "    w_base = g * CIG * swo + rn * swi",
              "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
              "    KC = tl.cdiv(CIG, BLOCK_K)",
              "    # one flat loop over (tap of the phase, channel chunk), so the loads pipeline across taps",
              f"    for kt in range(0, {' * '.join(f'J{d}' for d in sp)} * KC):",
              "        trem = kt // KC", "        ci = (kt % KC) * BLOCK_K + tl.arange(0, BLOCK_K)",
              "        k_mask = ci < CIG"]
    for d in reversed(sp):
        lines += [f"        j{d} = trem % J{d}", f"        trem = trem // J{d}"]
    lines += ["        valid = m_mask", "        x_row = x_base", "        w_col = w_base"]
    for d in sp:
        lines += [f"        i{d} = q{d} + (sh{d} - j{d})", f"        valid = valid & (i{d} >= 0) & (i{d} < I{d})",
                  f"        x_row += i{d} * sx{d}", f"        w_col += (t{d} + {stride[d]} * j{d}) * sw{d}"]
    lines += ["        a = tl.load(x_ptr + x_row[:, None] + ci[None, :] * sxc, "
              "mask=valid[:, None] & k_mask[None, :], other=0.0)",
              "        b = tl.load(w_ptr + w_col[None, :] + ci[:, None] * swo, "
              "mask=k_mask[:, None] & n_mask[None, :], other=0.0)",
              "        if F32_DOT:  # bf16 operands: dot in fp32 (Triton's CPU interpreter has no bf16 matmul)",
              "            a = a.to(tl.float32)",
              *dots.lines(ctx, "acc", "        ")]
    return lines


def emit(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x, w, bias = args["input"], args["weight"], args.get("bias")
    stride, padding, groups = list(args["stride"]), list(args["padding"]), int(args["groups"])
    s, sp, phases = len(stride), range(len(stride)), math.prod(stride)
    kname = ctx.fresh("_convt")
    tag = kname.lstrip("_").upper()
    wv_shape, out_v = val(w).shape, val(node)
    cog_hint, cig_hint = ctx.hint(wv_shape[1]), ctx.hint(wv_shape[0]) // groups
    taps_hint = math.prod(-(-ctx.hint(wv_shape[2 + d]) // stride[d]) for d in sp)  # the most taps of a phase
    mq_hint = ctx.hint(out_v.shape[0]) * math.prod(-(-ctx.hint(out_v.shape[2 + d]) // stride[d]) for d in sp)
    m_val, n_val, warps_val = dots.gpu_tiles(mq_hint, cog_hint, groups * phases)
    bm = ctx.tunable(f"{tag}_BLOCK_M", m_val, "output positions (of one stride phase) per program; >= 16")
    bn = ctx.tunable(f"{tag}_BLOCK_N", n_val, "output channels per program; >= 16")
    bk = ctx.tunable(f"{tag}_BLOCK_K", ctx.block(cig_hint, 16, 32), "input channels per reduction step; a "
                     "power of two >= 16")
    warps = ctx.tunable(f"{tag}_WARPS", warps_val, "1, 2, 4, 8 or 16")
    tf32x3 = dots.flag(ctx, tag)
    flag = ctx.tunable(f"{tag}_CHANNELS_LAST", int(cig_hint >= 16 and taps_hint > 1), "1: channels-last input "
                       "and weight copies (contiguous K loads); 0: read them in place")
    index = ["nb[:, None]", "co[None, :]"] + [f"o{d}[:, None]" for d in sp]
    out, group, epi = epilogue.fused_output(ctx, node, index, "cmask", "[BLOCK_M, BLOCK_N]")
    params = ["x_ptr", "w_ptr", "b_ptr", "y_ptr", "MQ", "CIG", "COG"]
    params += [f"{n}{d}" for n in "IOQK" for d in sp]
    params += ["sxn", "sxc"] + [f"sx{d}" for d in sp] + ["swo", "swi"] + [f"sw{d}" for d in sp]
    params += ["syn", "syc"] + [f"sy{d}" for d in sp]
    params += (epi.params if epi else []) + ["HAS_BIAS: tl.constexpr", "F32_DOT: tl.constexpr", "BLOCK_M: tl.constexpr",
                                             "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr", "TF32X3: tl.constexpr"]
    tail = ["    cmask = m_mask[:, None] & n_mask[None, :]",
            "    if HAS_BIAS:",
            "        acc += tl.load(b_ptr + co, mask=n_mask, other=0.0).to(tl.float32)[None, :]"]
    tail += [f"    {line}" for line in epi.lines] if epi else []
    y_off = "nb[:, None] * syn + co[None, :] * syc" + "".join(f" + o{d}[:, None] * sy{d}" for d in sp)
    tail.append(f"    tl.store(y_ptr + {y_off}, _cast_out({epi.result if epi else 'acc'}, y_ptr), mask=cmask)")
    what = f"transposed conv{s}d stride={stride} padding={padding} groups={groups}, {phases} stride phases"
    what = epilogue.label(what, group)
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}",
                                  *_kernel_lines(ctx, sp, stride, padding), *tail]))
    xv, wv = ctx.tensor(x), ctx.tensor(w)
    if epi:
        for line in epi.host:
            ctx.line(line)
    quot = [f"triton.cdiv({out}.shape[{2 + d}], {stride[d]})" for d in sp]
    mq = f"{xv}.shape[0] * " + " * ".join(quot)
    cog = f"{out}.shape[1] // {groups}"
    grid = f"(max(1, triton.cdiv({mq}, {bm})), max(1, triton.cdiv({cog}, {bn})), {groups * phases})"

    def launch_args(xa: str, wa: str) -> list[str]:
        """Arguments reading the input and weight as ``xa`` and ``wa`` (the tensors or channels-last copies);
        the epilogue's own arguments keep the original tensors."""
        largs = [xa, wa, ctx.tensor(bias) if bias is not None else out, out, mq, f"{xv}.shape[1] // {groups}", cog]
        largs += [f"{xa}.shape[{2 + d}]" for d in sp] + [f"{out}.shape[{2 + d}]" for d in sp] + quot
        largs += [f"{wa}.shape[{2 + d}]" for d in sp]
        largs += [f"{xa}.stride({d})" for d in range(2 + s)] + [f"{wa}.stride({d})" for d in range(2 + s)]
        largs += [f"{out}.stride({d})" for d in range(2 + s)] + (epi.launch if epi else [])
        largs += [f"HAS_BIAS={bias is not None}", f"F32_DOT={xv}.dtype == torch.bfloat16", f"BLOCK_M={bm}",
                  f"BLOCK_N={bn}", f"BLOCK_K={bk}", f"TF32X3={tf32x3}"]
        return largs + [f"num_warps={warps}"]

    branches = []
    for xa, wa in (("x_cl", "w_cl"), (xv, wv)):
        start = len(ctx.forward)
        ctx.launch(f"{kname}[{grid}]", launch_args(xa, wa))
        branches.append(ctx.forward[start:])
        del ctx.forward[start:]
    ctx.forward += [f"if {flag}:", f"    x_cl, w_cl = _k_major({xv}, 1), _k_major({wv}, 0)",
                    *(f"    {line}" for line in branches[0]), "else:", *(f"    {line}" for line in branches[1])]
    epilogue.bind_output(ctx, node, group, out)
