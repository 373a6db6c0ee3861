"""Recurrences: ``aten.lstm``, ``aten.gru``, ``aten.rnn_tanh`` and ``aten.rnn_relu``, kept whole by the trace
(as ``kernelevolve::lstm`` and the like, evaluators/recurrent_ops.py, so export does not unroll them either).

Decomposed, a 6-layer LSTM over 512 steps is 64k ATen ops and one launch per op per step (the own corpus's
LSTM ran at 0.10x eager, GRU at 0.04x). Kept whole, each layer and direction is two kernels:

* the input projection of every time step at once, ``x @ W_ih^T + b_ih``: one GEMM of (steps x batch) rows,
  the bulk of the FLOPs, at full occupancy;
* one scan over the time steps. Each program owns ``BLOCK_H`` hidden units (all of their gates) of one
  direction and one block of batch rows: per step it multiplies the previous hidden state by its slice of
  ``W_hh``, applies the cell and stores its units of ``h_t`` into the layer's output, which is where every
  program reads ``h_{t-1}`` from. Programs meet at a grid barrier after each step (an atomic counter with
  release/acquire, as TorchInductor's cooperative reductions do), so the whole sequence is one launch. That
  needs every program resident at once: the host checks the grid against the GPU's SM count and otherwise
  (or on Triton's CPU interpreter, which runs programs one after another, or when the ``PERSIST`` tunable is
  0) launches the same kernel once per step, the kernel boundary then being the barrier. The cell state
  lives in registers within a launch and in ``c_n`` between launches.
"""

from __future__ import annotations

from torch.fx import Node

from kernelevolve.lowering import dots
from kernelevolve.lowering.context import Context, packet, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import schema_args

KINDS = {"lstm": (0, 4), "gru": (1, 3), "rnn_tanh": (2, 1), "rnn_relu": (3, 1)}  # op -> (KIND, gates)

_HOST = '''
def _rnn(x, h0, c0, params, kind, gates, layers, dirs, batch_first, has_bias, proj, proj_blocks, scan,
         scan_blocks, persist, x3):
    """The recurrence's host loop: per layer, each direction's input projection, then one scan launch (or
    one per step where the grid cannot be resident at once)."""
    steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    hidden = h0.shape[-1]
    bm, bn, bk, pw = proj_blocks
    bb, bh, kb, sw = scan_blocks
    nprog, nb = triton.cdiv(hidden, bh), triton.cdiv(batch, bb)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 1
    whole = bool(persist) and (nprog == 1 or nprog * dirs * nb <= sms)  # a barrier needs all resident
    hn = torch.empty((layers * dirs, batch, hidden), dtype=x.dtype, device=x.device)
    cn = torch.empty_like(hn) if c0 is not None else hn
    per = 4 if has_bias else 2
    sync = torch.zeros((layers, dirs * nb), dtype=torch.int32, device=x.device)  # barrier counters, one fill
    sit, sib = (x.stride(1), x.stride(0)) if batch_first else (x.stride(0), x.stride(1))
    inp = x
    for layer in range(layers):
        last = layer == layers - 1
        shape = (batch, steps, dirs * hidden) if last and batch_first else (steps, batch, dirs * hidden)
        out = torch.empty(shape, dtype=x.dtype, device=x.device)
        sot, sob = (out.stride(1), out.stride(0)) if last and batch_first else (out.stride(0), out.stride(1))
        gx = torch.empty((dirs, steps * batch, gates * hidden), dtype=torch.float32, device=x.device)
        w, b = [], []
        for d in range(dirs):
            base = (layer * dirs + d) * per
            w_ih, w_hh = params[base], params[base + 1]
            b_ih, b_hh = (params[base + 2], params[base + 3]) if has_bias else (w_ih, w_hh)
            w.append(w_hh)
            b.append(b_hh)
            rows, cols = steps * batch, gates * hidden
            proj[(triton.cdiv(rows, bm), triton.cdiv(cols, bn))](
                inp, w_ih, b_ih, gx[d], rows, cols, inp.shape[-1], batch, sit, sib, inp.stride(-1),
                w_ih.stride(0), w_ih.stride(1), HAS_BIAS=has_bias, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                num_warps=pw, **x3)
        c_in = c0 if c0 is not None else hn
        for s0, s1 in ([(0, steps)] if whole else [(s, s + 1) for s in range(steps)]):
            scan[(nprog, dirs, nb)](
                gx, w[0], w[dirs - 1], b[0], b[dirs - 1], h0, c_in, out, hn, cn, sync[layer], steps, batch,
                hidden, s0, s1, layer * dirs, gx.stride(0), batch * gates * hidden, gates * hidden, h0.stride(0),
                h0.stride(1), c_in.stride(0), c_in.stride(1), hn.stride(0), hn.stride(1), sot, sob,
                w_hh.stride(0), w_hh.stride(1),
                KIND=kind, HAS_BIAS=has_bias, NPROG=nprog if whole else 1, BLOCK_B=bb, BLOCK_H=bh, BLOCK_K=kb,
                num_warps=sw, **x3)
        inp, sit, sib = out, sot, sob
    return out, hn, cn
'''


def _proj_kernel(name: str, ctx: Context) -> str:
    """gx[m, n] = x[t, b, :] . W_ih[n, :] (+ b_ih[n]) for m = t * batch + b: every step's input projection."""
    params = ["x_ptr", "w_ptr", "b_ptr", "g_ptr", "M", "N", "K", "BATCH", "sxt", "sxb", "sxk", "swn", "swk",
              "HAS_BIAS: tl.constexpr", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr"]
    params += ["TF32X3: tl.constexpr"] if ctx.nvidia else []
    return "\n".join([
        "@triton.jit", f"def {name}({', '.join(params)}):",
        "    # recurrence input projection: every time step's x @ W_ih^T (+ b_ih) as one GEMM",
        "    rm = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)",
        "    rn = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)",
        "    x_row = (rm // BATCH) * sxt + (rm % BATCH) * sxb",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "    for k0 in range(0, K, BLOCK_K):",
        "        rk = k0 + tl.arange(0, BLOCK_K)",
        "        a = tl.load(x_ptr + x_row[:, None] + rk[None, :] * sxk, mask=(rm[:, None] < M) & (rk[None, :] < K),"
        " other=0.0).to(tl.float32)",
        "        b = tl.load(w_ptr + rn[None, :] * swn + rk[:, None] * swk, mask=(rn[None, :] < N) & (rk[:, None] < K),"
        " other=0.0).to(tl.float32)",
        *dots.lines(ctx, "acc", "        "),
        "    if HAS_BIAS:",
        "        acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]",
        "    tl.store(g_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))"])


def _gate_product(ctx: Context, gate: int) -> list[str]:
    """acc{gate} += h_{t-1}[rows, k-chunk] @ W_hh[gate * H + units, k-chunk]^T"""
    return [f"            b = tl.load(w_ptr + ({gate} * H + j)[None, :] * swr + kk[:, None] * swk, "
            "mask=km[:, None] & jm[None, :], other=0.0).to(tl.float32)",
            *dots.lines(ctx, f"acc{gate}", "            ")]


def _scan_kernel(name: str, ctx: Context, gates: int) -> str:
    params = ["gx_ptr", "w0_ptr", "w1_ptr", "b0_ptr", "b1_ptr", "h0_ptr", "c0_ptr", "out_ptr", "hn_ptr", "cn_ptr",
              "sync_ptr", "T", "B", "H", "s0", "s1", "row0", "sgd", "sgt", "sgb", "sh0", "shb", "sc0", "scb", "snr",
              "snb", "sot", "sob", "swr", "swk", "KIND: tl.constexpr", "HAS_BIAS: tl.constexpr", "NPROG: tl.constexpr",
              "BLOCK_B: tl.constexpr", "BLOCK_H: tl.constexpr", "BLOCK_K: tl.constexpr"]
    params += ["TF32X3: tl.constexpr"] if ctx.nvidia else []
    lines = [
        "    # recurrence scan: KIND 0 LSTM, 1 GRU, 2 RNN tanh, 3 RNN relu; steps [s0, s1) of one layer",
        "    d = tl.program_id(1)",
        "    j = tl.program_id(0) * BLOCK_H + tl.arange(0, BLOCK_H)",
        "    rb = tl.program_id(2) * BLOCK_B + tl.arange(0, BLOCK_B)",
        "    jm = j < H",
        "    m2 = (rb[:, None] < B) & jm[None, :]",
        "    if d == 0:",
        "        w_ptr = w0_ptr",
        "        b_ptr = b0_ptr",
        "    else:",
        "        w_ptr = w1_ptr",
        "        b_ptr = b1_ptr",
        "    row = row0 + d",
        "    bar = sync_ptr + d * tl.num_programs(2) + tl.program_id(2)",
        "    h0_tile = h0_ptr + row * sh0 + rb[:, None] * shb",
        "    out_cols = out_ptr + rb[:, None] * sob + d * H",
        "    c = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)",
        "    if KIND == 0:  # the cell state: from c0 at the first step, else where the last launch left it",
        "        if s0 == 0:",
        "            c = tl.load(c0_ptr + row * sc0 + rb[:, None] * scb + j[None, :], mask=m2, other=0.0)"
        ".to(tl.float32)",
        "        else:",
        "            c = tl.load(cn_ptr + row * snr + rb[:, None] * snb + j[None, :], mask=m2, other=0.0)"
        ".to(tl.float32)",
        "    h = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)",
        "    for s in range(s0, s1):",
        "        t = tl.where(d == 0, s, T - 1 - s)",
        "        tp = tl.where(d == 0, t - 1, t + 1)",
        "        g_row = gx_ptr + d * sgd + t * sgt + rb[:, None] * sgb",
        *[f"        acc{q} = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)" for q in range(gates)],
        "        for k0 in range(0, H, BLOCK_K):",
        "            kk = k0 + tl.arange(0, BLOCK_K)",
        "            km = kk < H",
        "            am = (rb[:, None] < B) & km[None, :]",
        "            if s == 0:",
        "                a = tl.load(h0_tile + kk[None, :], mask=am, other=0.0).to(tl.float32)",
        "            else:  # h_{t-1}, written by every program of this direction: read past L1",
        "                a = tl.load(out_cols + tp * sot + kk[None, :], mask=am, other=0.0, cache_modifier='.cg')"
        ".to(tl.float32)",
    ]
    for q in range(gates):
        lines += _gate_product(ctx, q)
    lines += ["        if s == 0:",
              "            h_own = tl.load(h0_tile + j[None, :], mask=m2, other=0.0).to(tl.float32)",
              "        else:",
              "            h_own = tl.load(out_cols + tp * sot + j[None, :], mask=m2, other=0.0, cache_modifier='.cg')"
              ".to(tl.float32)"]
    for q in range(gates):
        lines += [f"        x{q} = tl.load(g_row + ({q} * H + j)[None, :], mask=m2, other=0.0)",
                  "        if HAS_BIAS:",
                  f"            acc{q} += tl.load(b_ptr + {q} * H + j, mask=jm, other=0.0).to(tl.float32)[None, :]"]
    if gates == 4:
        lines += ["        i_g = tl.sigmoid(x0 + acc0)", "        f_g = tl.sigmoid(x1 + acc1)",
                  "        g_g = _tanh(x2 + acc2)", "        o_g = tl.sigmoid(x3 + acc3)",
                  "        c = f_g * c + i_g * g_g", "        h = o_g * _tanh(c)"]
    elif gates == 3:
        lines += ["        r_g = tl.sigmoid(x0 + acc0)", "        z_g = tl.sigmoid(x1 + acc1)",
                  "        n_g = _tanh(x2 + r_g * acc2)", "        h = (1.0 - z_g) * n_g + z_g * h_own"]
    else:
        lines += ["        if KIND == 2:", "            h = _tanh(x0 + acc0)", "        else:",
                  "            h = tl.maximum(x0 + acc0, 0.0)"]
    lines += [
        "        tl.store(out_cols + t * sot + j[None, :], _cast_out(h, out_ptr), mask=m2)",
        "        if NPROG > 1:  # grid barrier: every program's h_t stored before any reads it",
        "            tl.debug_barrier()",
        "            seen = tl.atomic_add(bar, 1, sem='release') + 1",
        "            while seen < NPROG * (s - s0 + 1):",
        "                seen = tl.atomic_add(bar, 0, sem='acquire')",
        "            tl.debug_barrier()",
        "    if s1 > s0:",
        "        tl.store(hn_ptr + row * snr + rb[:, None] * snb + j[None, :], _cast_out(h, hn_ptr), mask=m2)",
        "        if KIND == 0:",
        "            tl.store(cn_ptr + row * snr + rb[:, None] * snb + j[None, :], _cast_out(c, cn_ptr), mask=m2)"]
    return "\n".join(["@triton.jit", f"def {name}({', '.join(params)}):", *lines])


def emit(ctx: Context, node: Node) -> None:
    name = packet(node)
    if getattr(node.target, "_overloadname", "") not in ("input", "default"):  # default: kernelevolve::lstm
        raise LoweringError(f"no Triton lowering for aten.{name} over packed sequences")
    kind, gates = KINDS[name]
    args = schema_args(node)
    x, hx, params = args["input"], args["hx"], list(args["params"])
    layers, dirs = int(args["num_layers"]), 2 if args["bidirectional"] else 1
    has_bias, batch_first = bool(args["has_biases"]), bool(args["batch_first"])
    if args["train"] and float(args["dropout"]) > 0:
        raise LoweringError(f"no Triton lowering for aten.{name} with dropout in training mode")
    if len(params) != layers * dirs * (4 if has_bias else 2):
        raise LoweringError(f"no Triton lowering for aten.{name} with projections (proj_size)")
    h0, c0 = (hx[0], hx[1]) if name == "lstm" else (hx, None)
    xv = val(x)
    batch = xv.shape[0] if batch_first else xv.shape[1]
    hidden = ctx.hint(val(h0).shape[-1])
    tag_p, tag_s = ctx.fresh("_rnnproj"), ctx.fresh("_rnnscan")
    up_p, up_s = tag_p.lstrip("_").upper(), tag_s.lstrip("_").upper()
    cols = gates * hidden
    if ctx.nvidia:
        bm, bn, bk, pw = 64, ctx.block(cols, 16, 64), 32, 4
        # 32 units a program: an H100 LSTM of 256 units ran 0.82x eager at 32, 0.61x at 16 (more programs at
        # each barrier), 0.04x with 256-wide K steps (spills); benchmarks/results/recurrence_h100.md
        bb, bh, kb, sw = ctx.block(batch, 16, 64), 32 if hidden <= 1024 else 64, 64, 4
    else:
        bm, bn, bk, pw = 64, ctx.block(cols, 16, 128), 32, 4
        bb, bh, kb, sw = ctx.block(batch, 16, 64), ctx.block(hidden, 16, 1024), ctx.block(hidden, 16, 256), 4
    knobs = [ctx.tunable(f"{up_p}_BLOCK_M", bm, "projection rows (steps x batch) per program; >= 16"),
             ctx.tunable(f"{up_p}_BLOCK_N", bn, "projection gate columns per program; >= 16"),
             ctx.tunable(f"{up_p}_BLOCK_K", bk, "projection reduction step; >= 16"),
             ctx.tunable(f"{up_p}_WARPS", pw, "1, 2, 4 or 8"),
             ctx.tunable(f"{up_s}_BLOCK_B", bb, "batch rows per scan program; >= 16"),
             ctx.tunable(f"{up_s}_BLOCK_H", bh, "hidden units (all their gates) per scan program; >= 16"),
             ctx.tunable(f"{up_s}_BLOCK_K", kb, "scan reduction step over the hidden state; >= 16"),
             ctx.tunable(f"{up_s}_WARPS", sw, "1, 2, 4 or 8")]
    persist = ctx.tunable(f"{up_s}_PERSIST", 1, "1: one scan launch with a grid barrier per step, where the grid "
                          "fits the GPU at once; 0: one launch per step")
    ctx.kernels.append(_proj_kernel(tag_p, ctx))
    ctx.kernels.append(_scan_kernel(tag_s, ctx, gates))
    if _HOST not in ctx.kernels:
        ctx.kernels.append(_HOST)
    x3 = f"dict(TF32X3={dots.flag(ctx, up_s)})" if ctx.nvidia else "{}"
    outputs = [ctx.fresh("buf") for _ in val(node)]
    c_arg = ctx.tensor(c0) if c0 is not None else "None"
    plist = "[" + ", ".join(ctx.tensor(p) for p in params) + "]"
    result = ctx.fresh("rnn")
    ctx.launch(f"{result} = _rnn", [ctx.tensor(x), ctx.tensor(h0), c_arg, plist, str(kind), str(gates), str(layers),
                                    str(dirs), str(batch_first), str(has_bias), tag_p, f"({', '.join(knobs[:4])})",
                                    tag_s, f"({', '.join(knobs[4:])})", persist, x3])
    ctx.line(f"{', '.join(outputs)} = {result}[:{len(outputs)}]")
    ctx.multi[node.name] = outputs


EMITTERS = {name: emit for name in KINDS}
