"""Convolution template (1d/2d/3d, strided, padded, dilated, grouped, transposed): implicit GEMM.

Rows of the GEMM are output positions (batch x spatial), columns the output channels of one group, and the
reduction runs over (input channel of the group, kernel offset). Each BLOCK_K step gathers the input tile
straight from x (positions outside the input are the zero padding; for a transposed conv, offsets that
do not land on a stride multiple contribute nothing) and multiplies it with the weight tile by tl.dot in
fp32. Bias and any fused pointwise chain are applied to the tile before the one store. On NVIDIA targets
the dot is TF32x3 (dots.py) and a non-transposed conv also gets a channels-last form (conv_nhwc.py) and a
direct fp32 FMA form for few input channels (conv_direct.py); sizes are compile-time constants there.
"""

from __future__ import annotations

import math

from torch.fx import Node

from kernelevolve.lowering import conv_depthwise, conv_direct, conv_nhwc, conv_transposed, dots, epilogue
from kernelevolve.lowering.context import Context, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import GUARD_PARAM, guard_tunable, schema_args


def emit(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x, w, bias = args["input"], args["weight"], args.get("bias")
    stride, padding, dilation = list(args["stride"]), list(args["padding"]), list(args["dilation"])
    transposed, groups = bool(args["transposed"]), args["groups"]
    if ctx.nvidia and conv_depthwise.applies(ctx, node):  # one input channel per group: a direct stencil
        return conv_depthwise.emit(ctx, node)
    s = len(stride)
    if not all(isinstance(v, int) for v in stride + padding + dilation + [groups]):
        raise LoweringError("no Triton lowering for aten.convolution.default with symbolic stride/padding/groups")
    if ctx.nvidia and conv_transposed.applies(node):  # stride phases: only the taps that land (conv_transposed.py)
        return conv_transposed.emit(ctx, node)
    kname = ctx.fresh("_conv")
    tag = kname.lstrip("_").upper()
    wv_shape = val(w).shape
    cog_hint = ctx.hint(wv_shape[1]) if transposed else ctx.hint(wv_shape[0]) // groups
    cig_hint = ctx.hint(wv_shape[0]) // groups if transposed else ctx.hint(wv_shape[1])
    ktot_hint = cig_hint * math.prod(ctx.hint(k) for k in wv_shape[2:])
    out_v = val(node)
    m_hint = ctx.hint(out_v.shape[0]) * math.prod(ctx.hint(o) for o in out_v.shape[2:])
    m_val, n_val, warps_val = ctx.block(m_hint, 16, 64, 512), ctx.block(cog_hint, 16, 64, 256), 4
    taps = math.prod(ctx.hint(k) for k in wv_shape[2:])
    direct = ctx.nvidia and not transposed and conv_direct.preferred(cig_hint, taps, stride)
    if ctx.nvidia:  # tensor-core tiles: up to 128 x 128, keeping two waves of programs
        m_val, n_val, warps_val = dots.gpu_tiles(m_hint, cog_hint, groups)
    if direct:  # few input channels: the FMA form's tiles (conv_direct.py)
        (m_val, n_val), warps_val = conv_direct.tiles(m_hint, cog_hint), 4
    bm = ctx.tunable(f"{tag}_BLOCK_M", m_val, "output positions per program; >= 16")
    bn = ctx.tunable(f"{tag}_BLOCK_N", n_val, "output channels per program; >= 16")
    channels_last = ctx.nvidia and not transposed and cig_hint >= 16 and taps > 1  # a 1x1 conv needs no copies
    # the channels-last kernel steps through one tap's channels: a step wider than them is masked work
    bk_val = ctx.block(cig_hint if channels_last else ktot_hint, 16, 32, 128)
    bk = ctx.tunable(f"{tag}_BLOCK_K", bk_val, "reduction step over (channel, "
                     "kernel offset); a power of two >= 16")
    warps = ctx.tunable(f"{tag}_WARPS", warps_val, "1, 2, 4, 8 or 16")
    tf32x3 = dots.flag(ctx, tag)
    sp = range(s)
    index = ["nb[:, None]", "co[None, :]"] + [f"o{d}[:, None]" for d in sp]
    out, group, epi = epilogue.fused_output(ctx, node, index, "cmask", "[BLOCK_M, BLOCK_N]")
    params = ["x_ptr", "w_ptr", "b_ptr", "y_ptr", "M", *ctx.sizes(["KTOT", "CIG", "COG"] + [f"I{d}" for d in sp] +
                                                                  [f"O{d}" for d in sp] + [f"K{d}" for d in sp])]
    params += ["sxn", "sxc"] + [f"sx{d}" for d in sp] + ["swo", "swi"] + [f"sw{d}" for d in sp]
    params += ["syn", "syc"] + [f"sy{d}" for d in sp]
    params += (epi.params if epi else []) + ["HAS_BIAS: tl.constexpr", "F32_DOT: tl.constexpr", "BLOCK_M: tl.constexpr",
                                             "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr"]
    params += ["TF32X3: tl.constexpr"] if ctx.nvidia else []
    params += ctx.idx_param()
    lines = [f"    g = {ctx.pid(2)}",
             f"    rm = {ctx.pid(0)} * BLOCK_M + tl.arange(0, BLOCK_M)",
             f"    rn = {ctx.pid(1)} * BLOCK_N + tl.arange(0, BLOCK_N)",
             "    m_mask = rm < M", "    n_mask = rn < COG", "    co = g * COG + rn", "    rem = rm"]
    for d in reversed(sp):
        lines += [f"    o{d} = rem % O{d}", f"    rem = rem // O{d}"]
    lines += ["    nb = rem", "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)"]
    head = lines
    lines = ["    for k0 in range(0, KTOT, BLOCK_K):", "        rk = k0 + tl.arange(0, BLOCK_K)",
             "        k_mask = rk < KTOT", "        krem = rk"]
    for d in reversed(sp):
        lines += [f"        kk{d} = krem % K{d}", f"        krem = krem // K{d}"]
    lines += ["        ci = krem", "        valid = m_mask[:, None] & k_mask[None, :]",
              "        x_off = nb[:, None] * sxn + (g * CIG + ci)[None, :] * sxc"]
    for d in sp:
        if transposed:
            lines += [f"        t{d} = o{d}[:, None] + {padding[d]} - kk{d}[None, :] * {dilation[d]}",
                      f"        i{d} = t{d} // {stride[d]}",
                      f"        valid = valid & (t{d} >= 0) & (t{d} % {stride[d]} == 0) & (i{d} < I{d})"]
        else:
            lines += [f"        i{d} = o{d}[:, None] * {stride[d]} - {padding[d]} + kk{d}[None, :] * {dilation[d]}",
                      f"        valid = valid & (i{d} >= 0) & (i{d} < I{d})"]
        lines.append(f"        x_off += i{d} * sx{d}")
    if transposed:  # weight [C_in, C_out / groups, k...]
        w_off = "(g * CIG + ci)[:, None] * swo + rn[None, :] * swi"
    else:  # weight [C_out, C_in / groups, k...]
        w_off = "co[None, :] * swo + ci[:, None] * swi"
    w_off += "".join(f" + kk{d}[:, None] * sw{d}" for d in sp)
    lines += ["        a = tl.load(x_ptr + x_off, mask=valid, other=0.0)",
              f"        b = tl.load(w_ptr + {w_off}, mask=k_mask[:, None] & n_mask[None, :], other=0.0)",
              "        if F32_DOT:  # bf16 operands: dot in fp32 (Triton's CPU interpreter has no bf16 matmul)",
              "            a = a.to(tl.float32)",
              *dots.lines(ctx, "acc", "        ")]
    tail = ["    cmask = m_mask[:, None] & n_mask[None, :]",
            "    if HAS_BIAS:",
            "        acc += tl.load(b_ptr + co, mask=n_mask, other=0.0).to(tl.float32)[None, :]"]
    tail += [f"    {line}" for line in epi.lines] if epi else []
    y_off = "nb[:, None] * syn + co[None, :] * syc" + "".join(f" + o{d}[:, None] * sy{d}" for d in sp)
    result = epi.result if epi else "acc"
    tail.append(f"    tl.store(y_ptr + {y_off}, _cast_out({result}, y_ptr), mask=cmask)")
    lines = head + lines + tail
    what = (f"{'transposed ' if transposed else ''}conv{s}d stride={stride} padding={padding} dilation={dilation} "
            f"groups={groups}")
    what = epilogue.label(what, group)
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}", *lines]))
    xv, wv = ctx.tensor(x), ctx.tensor(w)
    if epi:
        for line in epi.host:
            ctx.line(line)
    spatial = " * ".join(f"{out}.shape[{2 + d}]" for d in sp)
    cig = f"{xv}.shape[1] // {groups}"
    cog = f"{out}.shape[1] // {groups}"

    def launch_args(xa: str, wa: str) -> list[str]:
        """The kernel's arguments reading the conv's input and weight as ``xa`` and ``wa`` (the tensors, or
        their channels-last copies); the epilogue's own arguments keep the original tensors."""
        ktot = f"{xa}.shape[1] // {groups} * " + " * ".join(f"{wa}.shape[{2 + d}]" for d in sp)
        args = [xa, wa, ctx.tensor(bias) if bias is not None else out, out, f"{xv}.shape[0] * {spatial}", ktot,
                cig, cog]
        args += [f"{xa}.shape[{2 + d}]" for d in sp] + [f"{out}.shape[{2 + d}]" for d in sp]
        args += [f"{wa}.shape[{2 + d}]" for d in sp]
        args += [f"{xa}.stride({d})" for d in range(2 + s)] + [f"{wa}.stride({d})" for d in range(2 + s)]
        args += [f"{out}.stride({d})" for d in range(2 + s)] + (epi.launch if epi else [])
        args += [f"HAS_BIAS={bias is not None}", f"F32_DOT={xv}.dtype == torch.bfloat16",
                 f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}"]
        args += [f"TF32X3={tf32x3}"] if ctx.nvidia else []
        args += ctx.idx_launch([xa, wa, out])
        return args + [f"num_warps={warps}"]

    launch = launch_args(xv, wv)
    grid = f"(max(1, triton.cdiv({launch[4]}, {bm})), max(1, triton.cdiv({cog}, {bn})), {groups})"
    if ctx.nvidia and not transposed:  # the channels-last form, switched by a flag the search can flip
        cl_name = ctx.fresh("_convcl")
        cl_params = ", ".join(params + ["FLAT_TAPS: tl.constexpr"])
        ctx.kernels.append("\n".join(["@triton.jit", f"def {cl_name}({cl_params}):",
                                      f"    # {what}, channels-last: taps outer, contiguous channels inner",
                                      *head, *conv_nhwc.loop(ctx, sp, stride, padding, dilation), *tail]))
        flag = ctx.tunable(f"{tag}_CHANNELS_LAST", int(channels_last), "1: channels-last input and weight copies "
                           "and the tap-outer kernel; 0: the NCHW gather")
        flat = ctx.tunable(f"{tag}_FLAT_TAPS", 1, "1: one pipelined loop over (tap, channel step); 0: taps outer")
        cl_args = launch_args("x_cl", "w_cl")
        cl_args.insert(-1, f"FLAT_TAPS={flat}")
        start = len(ctx.forward)
        conv_nhwc.launch_either(ctx, flag, (f"{cl_name}[{grid}]", cl_args),
                                (f"{kname}[{grid}]", launch))
        dot_forms = ctx.forward[start:]
        del ctx.forward[start:]
        fma_name = ctx.fresh("_convfma")
        ctx.kernels.append("\n".join(["@triton.jit", f"def {fma_name}({', '.join([*params, GUARD_PARAM])}):",
                                      f"    # {what}, direct: fp32 outer products over (channel, tap)",
                                      *head, *conv_direct.loop(sp, stride, padding, dilation), *tail]))
        use_direct = ctx.tunable(f"{tag}_DIRECT", int(direct), "1: fp32 FMA outer products (few input "
                                 "channels); 0: the tensor-core forms")
        guard = guard_tunable(ctx, tag)
        conv_direct.launch_either(ctx, use_direct, (f"{fma_name}[{grid}]", [*launch[:-1], f"GUARD={guard}",
                                                                             launch[-1]]), dot_forms)
    else:
        ctx.launch(f"{kname}[{grid}]", launch)
    epilogue.bind_output(ctx, node, group, out)


EMITTERS = {"convolution": emit}
