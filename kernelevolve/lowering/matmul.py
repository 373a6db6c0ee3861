"""Matmul template for mm, addmm and bmm: tiled tl.dot with fp32 accumulation and a fused epilogue.

One program computes a BLOCK_M x BLOCK_N tile of one batch's output, stepping through K by BLOCK_K.
Operands are read through their strides (a transposed weight costs nothing); fp32 operands use
``input_precision="ieee"`` so results match ATen at 1e-4. addmm's bias (times beta) and any fused
pointwise chain (bias, activation, residual, scale) are applied to the fp32 tile before the single store.

fp32 operands sum K in groups of K_GROUP steps, each group in its own accumulator added to the total: one
running sum over a long K (a 131072-long matmul, a matvec) rounds K / BLOCK_K times in sequence, and the
draft was then less exact than cuBLAS (which splits K) by more than the judge allows. 16-bit operands keep
one running sum; their tolerance is far above that rounding.
"""

from __future__ import annotations

from torch.fx import Node

from kernelevolve.lowering import epilogue
from kernelevolve.lowering.context import Context, packet, val
from kernelevolve.lowering.indexing import schema_args

K_GROUP = 16  # BLOCK_K steps per partial sum of an fp32 matmul


def emit(ctx: Context, node: Node) -> None:
    name = packet(node)
    args = schema_args(node)
    a, b = (args["mat1"], args["mat2"]) if name == "addmm" else (args["self"], args["mat2"])
    bias = args.get("self") if name == "addmm" else None
    beta, alpha = args.get("beta", 1), args.get("alpha", 1)
    batched = name == "bmm"
    kname = ctx.fresh("_matmul")
    tag = kname.lstrip("_").upper()
    a_shape, b_shape = val(a).shape, val(b).shape
    bm = ctx.tunable(f"{tag}_BLOCK_M", ctx.block(a_shape[-2], 16, 64, 128), "output rows per program; >= 16")
    bn = ctx.tunable(f"{tag}_BLOCK_N", ctx.block(b_shape[-1], 16, 64, 128), "output columns per program; >= 16")
    bk = ctx.tunable(f"{tag}_BLOCK_K", ctx.block(a_shape[-1], 16, 32, 64), "reduction step; a power of two >= 16")
    warps = ctx.tunable(f"{tag}_WARPS", 4, "1, 2, 4, 8 or 16")
    stages = ctx.tunable(f"{tag}_STAGES", 2, "software-pipelining depth of the K loop")
    out = ctx.fresh("buf")
    found = epilogue.find(ctx, node, through_views=True)
    group, anchor = found if found else (None, node)
    root = group.root if group else node
    ctx.empty(out, root)
    tile_shape = ctx.shape(val(node)) if anchor is not node else None
    store = out
    if tile_shape:  # the chain is read through a reshape of the product: store through the same reshape
        store = ctx.fresh("tile")
        ctx.line(f"{store} = {out}.view({tile_shape})")
    av, bv = ctx.tensor(a), ctx.tensor(b)
    index = ["pid_b", "rm[:, None]", "rn[None, :]"] if batched else ["rm[:, None]", "rn[None, :]"]
    epi = epilogue.build(ctx, group, anchor, index, "cmask", "[BLOCK_M, BLOCK_N]", out, tile_shape) if group else None
    params = ["a_ptr", "b_ptr", "c_ptr", "bias_ptr", "M", "N", "K", "sab", "sam", "sak", "sbb", "sbk", "sbn",
              "scb", "scm", "scn", "sbm", "sbn_", "beta", "alpha"]
    params += (epi.params if epi else []) + ["HAS_BIAS: tl.constexpr", "F32_DOT: tl.constexpr", "BLOCK_M: tl.constexpr",
                                             "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr",
                                             "K_GROUP: tl.constexpr"]
    epi_lines = [f"    {line}" for line in epi.lines] if epi else []
    result = epi.result if epi else "acc"
    kernel = "\n".join([
        "@triton.jit",
        f"def {kname}({', '.join(params)}):",
        f"    # {name}{' + fused ' + ', '.join(sorted({packet(m) for m in group.members})) if group else ''}",
        "    pid_b = tl.program_id(2).to(tl.int64)",
        "    rm = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)",
        "    rn = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)",
        "    a_base = a_ptr + pid_b * sab + rm[:, None] * sam",
        "    b_base = b_ptr + pid_b * sbb + rn[None, :] * sbn",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "    for k1 in range(0, K, BLOCK_K * K_GROUP):  # K_GROUP steps summed apart, then added: fp32 error",
        "        part = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # grows with K / K_GROUP + K_GROUP",
        "        for k0 in range(k1, tl.minimum(k1 + BLOCK_K * K_GROUP, K), BLOCK_K):",
        "            rk = k0 + tl.arange(0, BLOCK_K)",
        "            a = tl.load(a_base + rk[None, :] * sak, mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)",
        "            b = tl.load(b_base + rk[:, None] * sbk, mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)",
        "            if F32_DOT:  # bf16 operands: dot in fp32 (Triton's CPU interpreter has no bf16 matmul)",
        "                a = a.to(tl.float32)",
        "                b = b.to(tl.float32)",
        "            part = tl.dot(a, b.to(a.dtype), part, input_precision=\"ieee\")",
        "        acc += part",
        "    cmask = (rm[:, None] < M) & (rn[None, :] < N)",
        "    acc = acc * alpha",
        "    if HAS_BIAS:",
        "        acc += beta * tl.load(bias_ptr + rm[:, None] * sbm + rn[None, :] * sbn_, mask=cmask, other=0.0)"
        ".to(tl.float32)",
        *epi_lines,
        f"    tl.store(c_ptr + pid_b * scb + rm[:, None] * scm + rn[None, :] * scn, _cast_out({result}, c_ptr), "
        "mask=cmask)",
    ])
    ctx.kernels.append(kernel)
    if epi:
        for line in epi.host:
            ctx.line(line)
    if bias is not None:
        ctx.line(f"bias_view = {ctx.tensor(bias)}.expand({av}.shape[0], {bv}.shape[1])")
    if batched:
        dims = [f"{av}.shape[1]", f"{bv}.shape[2]", f"{av}.shape[2]", f"{av}.stride(0)", f"{av}.stride(1)",
                f"{av}.stride(2)", f"{bv}.stride(0)", f"{bv}.stride(1)", f"{bv}.stride(2)", f"{store}.stride(0)",
                f"{store}.stride(1)", f"{store}.stride(2)"]
        batch = f"{av}.shape[0]"
    else:
        dims = [f"{av}.shape[0]", f"{bv}.shape[1]", f"{av}.shape[1]", "0", f"{av}.stride(0)", f"{av}.stride(1)",
                "0", f"{bv}.stride(0)", f"{bv}.stride(1)", "0", f"{store}.stride(0)", f"{store}.stride(1)"]
        batch = "1"
    bias_args = ["bias_view.stride(0)", "bias_view.stride(1)"] if bias is not None else ["0", "0"]
    launch = [av, bv, store, ctx.tensor(bias) if bias is not None else out, *dims, *bias_args, ctx.sym(beta),
              ctx.sym(alpha)] + (epi.launch if epi else [])
    launch += [f"HAS_BIAS={bias is not None}", f"F32_DOT={av}.dtype == torch.bfloat16",
               f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}",
               f"K_GROUP={K_GROUP} if {av}.dtype == torch.float32 else 1 << 20",
               f"num_warps={warps}", f"num_stages={stages}"]
    m_expr, n_expr = dims[0], dims[1]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({m_expr}, {bm})), max(1, triton.cdiv({n_expr}, {bn})), {batch})]",
               launch)
    if group:
        ctx.done.add(group.root.name)
        ctx.bind(group.root, out)
    ctx.bind(node, out)


EMITTERS = {"mm": emit, "addmm": emit, "bmm": emit}
