"""Creation, indexing and copy ops: arange, gather, cat, flip.

``cat`` and ``flip`` are strided copies (the shared ``_copy_kernel``: each input into its slice of the
output; a flip reads with negated strides). ``arange`` fills start + i * step; ``gather`` reads the
input at the index tensor's values along one dim and at the output's own position along the others.
"""

from __future__ import annotations

from torch.fx import Node

from kernelevolve.lowering.context import Context, compute_type, val
from kernelevolve.lowering.indexing import norm_dims, schema_args


def emit_arange(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    start, step = args.get("start", 0), args.get("step", 1)
    kname = ctx.fresh("_arange")
    block = ctx.tunable(f"{kname.lstrip('_').upper()}_BLOCK", 1024, "elements per program")
    ct = compute_type(val(node).dtype)
    ctx.kernels.append("\n".join([
        "@triton.jit", f"def {kname}(out_ptr, n, start, step, BLOCK: tl.constexpr):",
        "    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
        f"    v = start + offs.to({ct}) * step",
        "    tl.store(out_ptr + offs, v.to(out_ptr.dtype.element_ty), mask=offs < n)"]))
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    ctx.launch(f"{kname}[(max(1, triton.cdiv({out}.numel(), {block})),)]",
               [out, f"{out}.numel()", ctx.sym(start), ctx.sym(step), f"BLOCK={block}"])
    ctx.bind(node, out)


def emit_gather(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x, index = args["self"], args["index"]
    rank = val(index).dim()
    dim = norm_dims(args["dim"], max(rank, 1))[0] if rank else 0
    kname = ctx.fresh("_gather")
    block = ctx.tunable(f"{kname.lstrip('_').upper()}_BLOCK", 1024, "elements per program")
    sizes = [f"n{d}" for d in range(rank)]
    xs = [f"xs{d}" for d in range(rank)]
    js = [f"js{d}" for d in range(rank)]
    lines = ["    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < total",
             "    rem = offs", "    x_off = offs * 0", "    j_off = offs * 0"]
    for d in reversed(range(rank)):
        lines.append(f"    i{d} = rem % n{d}" if d else "    i0 = rem")
        if d:
            lines.append(f"    rem = rem // n{d}")
        lines.append(f"    j_off += i{d} * js{d}")
        if d != dim:
            lines.append(f"    x_off += i{d} * xs{d}")
    lines += ["    j = tl.load(j_ptr + j_off, mask=mask, other=0).to(tl.int64)",
              f"    v = tl.load(x_ptr + x_off + j * xs{dim}, mask=mask, other=0)" if rank else
              "    v = tl.load(x_ptr + j * xs0, mask=mask, other=0)",
              "    tl.store(out_ptr + offs, v, mask=mask)"]
    params = ["x_ptr", "j_ptr", "out_ptr", "total", *sizes, *(xs or ["xs0"]), *js, "BLOCK: tl.constexpr"]
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):",
                                  f"    # gather along dim {dim}", *lines]))
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    xv, jv = ctx.tensor(x), ctx.tensor(index)
    launch = [xv, jv, out, f"{out}.numel()"] + [f"{jv}.shape[{d}]" for d in range(rank)]
    launch += [f"{xv}.stride({d})" for d in range(rank)] if rank else ["1"]
    launch += [f"{jv}.stride({d})" for d in range(rank)] + [f"BLOCK={block}"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({out}.numel(), {block})),)]", launch)
    ctx.bind(node, out)


def emit_cat(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    tensors = [t for t in args["tensors"] if val(t).numel() != 0 or val(t).dim() != 1]
    dim = norm_dims(args.get("dim", 0), val(node).dim())[0]
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    ctx.line("at = 0")
    for t in tensors:
        tv = ctx.tensor(t)
        ctx.line(f"_copy_into({out}.narrow({dim}, at, {tv}.shape[{dim}]), {tv})")
        ctx.line(f"at += {tv}.shape[{dim}]")
    ctx.bind(node, out)


def emit_flip(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    dims = norm_dims(list(args["dims"]), val(node).dim())
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    ctx.line(f"_copy_into({out}, {ctx.tensor(args['self'])}, flip={tuple(dims)!r})")
    ctx.bind(node, out)


EMITTERS = {"arange": emit_arange, "gather": emit_gather, "cat": emit_cat, "flip": emit_flip}
