"""Pooling template: max (with indices) and average pooling over 1-3 spatial dims, one output per lane.

Each lane owns one output element (batch, channel, position) and visits its window with a
``tl.static_range`` over the kernel offsets (sizes are compile-time constants of the graph). Max pooling
keeps the first maximum (NaN wins, as in ATen) and its flat index in the input plane; average pooling
divides by ATen's divisor (the override, or the window clipped to the padded or to the real input).
"""

from __future__ import annotations

import math

from torch.fx import Node

from kernelevolve.lowering.context import Context, packet, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import GUARD_PARAM, guard_tunable, padded_load, schema_args


def emit(ctx: Context, node: Node) -> None:
    name = packet(node)
    args = schema_args(node)
    x = args["self"]
    is_max = name.startswith("max_pool")
    ksize = list(args["kernel_size"])
    s = {"1d": 1, "2d": 2, "3d": 3}[name.split("_pool")[1][:2]]
    if len(ksize) == 1:
        ksize = ksize * s
    stride = list(args.get("stride") or ksize)
    stride = stride * s if len(stride) == 1 else stride
    padding = list(args.get("padding") or [0])
    padding = padding * s if len(padding) == 1 else padding
    dilation = list(args.get("dilation") or [1]) if is_max else [1]
    dilation = dilation * s if len(dilation) == 1 else dilation
    if val(x).dim() != s + 2:
        raise LoweringError(f"no Triton lowering for {node.target} on an unbatched input")
    kname = ctx.fresh("_pool")
    tag = kname.lstrip("_").upper()
    first = val(node)[0] if isinstance(val(node), (list, tuple)) else val(node)
    block = ctx.tunable(f"{tag}_BLOCK", ctx.block(first.numel(), 16, 256, 2048),
                        "output elements per program; any power of two")
    warps = ctx.tunable(f"{tag}_WARPS", 4, "1, 2, 4, 8 or 16")
    guard = guard_tunable(ctx, tag)
    sp = range(s)
    params = ["x_ptr", "y_ptr", "i_ptr", "total", *ctx.sizes(["C"] + [f"I{d}" for d in sp] + [f"O{d}" for d in sp])]
    params += ["sxn", "sxc"] + [f"sx{d}" for d in sp] + ["divisor", "BLOCK: tl.constexpr", GUARD_PARAM,
                                                         *ctx.idx_param()]
    lines = [f"    offs = {ctx.pid(0)} * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < total",
             "    rem = offs"]
    for d in reversed(sp):
        lines += [f"    o{d} = rem % O{d}", f"    rem = rem // O{d}"]
    lines += ["    c = rem % C", "    nb = rem // C", "    base = nb * sxn + c * sxc"]
    if is_max:
        lines += ["    best = tl.full([BLOCK], float('-inf'), tl.float32)",
                  "    best_i = tl.full([BLOCK], -1, tl.int64)"]
    else:
        lines += ["    acc = tl.zeros([BLOCK], tl.float32)"]
    total_k = math.prod(ksize)
    lines.append(f"    for kk in tl.static_range({total_k}):")
    valid, addr, flat = ["mask"], ["base"], ""
    for d in sp:
        inner = math.prod(ksize[d + 1:])
        offset = f"((kk // {inner}) % {ksize[d]}) * {dilation[d]}"
        lines.append(f"        i{d} = o{d} * {stride[d]} - {padding[d]} + {offset}")
        valid.append(f"(i{d} >= 0) & (i{d} < I{d})")
        addr.append(f"i{d} * sx{d}")
        flat = f"i{d}" if d == 0 else f"({flat}) * I{d} + i{d}"
    v = padded_load("x_ptr + " + " + ".join(addr), "x_ptr", "valid", "float('-inf')")
    lines += [f"        valid = {' & '.join(valid)}", f"        v = {v}.to(tl.float32)"]
    if is_max:
        lines += ["        upd = valid & ((v > best) | (v != v) | (best_i < 0))",
                  "        best = tl.where(upd, v, best)",
                  f"        best_i = tl.where(upd, ({flat}).to(tl.int64), best_i)",
                  "    tl.store(y_ptr + offs, _cast_out(best, y_ptr), mask=mask)",
                  "    tl.store(i_ptr + offs, best_i, mask=mask)"]
    else:
        override = args.get("divisor_override")
        include_pad = args.get("count_include_pad", True)
        lines += ["        acc += tl.where(valid, v, 0.0)"]
        if override:
            lines.append("    res = acc / divisor")
        else:
            lines += ["    count = tl.full([BLOCK], 1.0, tl.float32)"]
            for d in sp:
                lines += [f"    start{d} = o{d} * {stride[d]} - {padding[d]}",
                          f"    end{d} = tl.minimum(start{d} + {ksize[d]}, I{d} + {padding[d]})"]
                if include_pad:
                    lines.append(f"    count = count * (end{d} - start{d}).to(tl.float32)")
                else:
                    lines.append(f"    count = count * (tl.minimum(end{d}, I{d}) - tl.maximum(start{d}, 0))"
                                 ".to(tl.float32)")
            lines.append("    res = acc / count")
        lines.append("    tl.store(y_ptr + offs, _cast_out(res, y_ptr), mask=mask)")
    what = f"{name} kernel={ksize} stride={stride} padding={padding}" + (f" dilation={dilation}" if is_max else "")
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}", *lines]))
    xv = ctx.tensor(x)
    vars_ = ctx.empty_outputs(node)
    y = vars_[0]
    launch = [xv, y, vars_[1] if is_max else y, f"{y}.numel()", f"{xv}.shape[1]"]
    launch += [f"{xv}.shape[{2 + d}]" for d in sp] + [f"{y}.shape[{2 + d}]" for d in sp]
    launch += [f"{xv}.stride({d})" for d in range(2 + s)]
    launch += [ctx.sym(float(args.get("divisor_override") or 1.0)), f"BLOCK={block}", f"GUARD={guard}",
               *ctx.idx_launch([xv, y]), f"num_warps={warps}"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({y}.numel(), {block})),)]", launch)
    if is_max:
        ctx.multi[node.name] = vars_
    else:
        ctx.bind(node, y)


def emit_adaptive(ctx: Context, node: Node) -> None:
    """Adaptive pooling: output position o of O covers input [floor(o I / O), ceil((o + 1) I / O))."""
    name = packet(node)
    x = node.args[0]
    is_max = name.startswith("adaptive_max")
    s = val(x).dim() - 2
    sp = range(s)
    kname = ctx.fresh("_adaptive_pool")
    tag = kname.lstrip("_").upper()
    first = val(node)[0] if isinstance(val(node), (list, tuple)) else val(node)
    block = ctx.tunable(f"{tag}_BLOCK", ctx.block(first.numel(), 16, 256, 2048),
                        "output elements per program; any power of two")
    guard = guard_tunable(ctx, tag)
    params = ["x_ptr", "y_ptr", "i_ptr", "total", *ctx.sizes(["C", "KTOT"] + [f"I{d}" for d in sp] +
                                                            [f"O{d}" for d in sp] + [f"KM{d}" for d in sp])]
    params += ["sxn", "sxc"] + [f"sx{d}" for d in sp] + ["BLOCK: tl.constexpr", GUARD_PARAM, *ctx.idx_param()]
    lines = [f"    offs = {ctx.pid(0)} * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < total",
             "    rem = offs"]
    for d in reversed(sp):
        lines += [f"    o{d} = rem % O{d}", f"    rem = rem // O{d}"]
    lines += ["    c = rem % C", "    nb = rem // C", "    base = nb * sxn + c * sxc", "    count = offs * 0 + 1"]
    for d in sp:
        lines += [f"    start{d} = (o{d} * I{d}) // O{d}", f"    end{d} = ((o{d} + 1) * I{d} + O{d} - 1) // O{d}",
                  f"    count = count * (end{d} - start{d})"]
    lines += (["    best = tl.full([BLOCK], float('-inf'), tl.float32)", "    best_i = tl.full([BLOCK], -1, tl.int64)"]
              if is_max else ["    acc = tl.zeros([BLOCK], tl.float32)"])
    lines += ["    for kk in range(0, KTOT):", "        krem = kk", "        valid = mask"]
    addr, flat = ["base"], ""
    for d in reversed(sp):
        lines += [f"        i{d} = start{d} + krem % KM{d}", f"        krem = krem // KM{d}",
                  f"        valid = valid & (i{d} < end{d})"]
    for d in sp:
        addr.append(f"i{d} * sx{d}")
        flat = f"i{d}" if d == 0 else f"({flat}) * I{d} + i{d}"
    v = padded_load("x_ptr + " + " + ".join(addr), "x_ptr", "valid", "float('-inf')")
    lines.append(f"        v = {v}.to(tl.float32)")
    if is_max:
        lines += ["        upd = valid & ((v > best) | (v != v) | (best_i < 0))",
                  "        best = tl.where(upd, v, best)",
                  f"        best_i = tl.where(upd, ({flat}).to(tl.int64), best_i)",
                  "    tl.store(y_ptr + offs, _cast_out(best, y_ptr), mask=mask)",
                  "    tl.store(i_ptr + offs, best_i, mask=mask)"]
    else:
        lines += ["        acc += tl.where(valid, v, 0.0)",
                  "    tl.store(y_ptr + offs, _cast_out((acc / count.to(tl.float32)), y_ptr), mask=mask)"]
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {name}", *lines]))
    xv = ctx.tensor(x)
    vars_ = ctx.empty_outputs(node)
    y = vars_[0]
    windows = [f"(-(-{xv}.shape[{2 + d}] // {y}.shape[{2 + d}]) + 1)" for d in sp]
    launch = [xv, y, vars_[1] if is_max else y, f"{y}.numel()", f"{xv}.shape[1]", " * ".join(windows)]
    launch += [f"{xv}.shape[{2 + d}]" for d in sp] + [f"{y}.shape[{2 + d}]" for d in sp] + windows
    launch += [f"{xv}.stride({d})" for d in range(2 + s)] + [f"BLOCK={block}", f"GUARD={guard}",
                                                          *ctx.idx_launch([xv, y])]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({y}.numel(), {block})),)]", launch)
    if is_max:
        ctx.multi[node.name] = vars_
    else:
        ctx.bind(node, y)


EMITTERS = {name: emit for name in ("max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d",
                                    "avg_pool2d", "avg_pool3d")}
EMITTERS.update({name: emit_adaptive for name in ("_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
                                                  "adaptive_max_pool2d", "adaptive_max_pool3d")})
