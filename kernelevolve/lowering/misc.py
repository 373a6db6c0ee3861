"""Creation, indexing and copy ops: arange, gather, cat, flip.

``cat`` is one kernel over its output that loads each element from the source holding it; ``flip`` is a
strided copy (the shared ``_copy_kernel``, reading with negated strides). ``arange`` fills start + i * step;
``gather`` reads the input at the index tensor's values along one dim and at the output's own position along
the others.
"""

from __future__ import annotations

import torch
from torch.fx import Node

from kernelevolve.lowering.context import Context, compute_type, packet, val
from kernelevolve.lowering.errors import LoweringError
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
        "    tl.store(out_ptr + offs, _cast_out(v, out_ptr), mask=offs < n)"]))
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


CAT_GATHER_MAX = 8  # sources one cat kernel reads; a longer list is copied source by source


def emit_cat(ctx: Context, node: Node) -> None:
    """One kernel over the output whose elements each load from the source that holds them (``_cat_into``):
    the output is written in order however thin the slices (a ``stack`` along the last dim), where a copy per
    source would write every other element and pay for whole sectors twice. Where an earlier cat along the
    same dim joined a prefix of these inputs (DenseNet's ``cat(features)`` after ``features.append``), its
    output stands for them: the reads stay two sources instead of growing with the list."""
    args = schema_args(node)
    tensors = [t for t in args["tensors"] if val(t).numel() != 0 or val(t).dim() != 1]
    dim = norm_dims(args.get("dim", 0), val(node).dim())[0]
    names = tuple(t.name for t in tensors)
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    prefix = _longest_prefix_cat(ctx, dim, names, val(node).dtype)
    sources = [ctx.tensor(t) for t in tensors]
    if prefix is not None:
        sources[:len(prefix[1])] = [prefix[2]]
    if len(sources) <= CAT_GATHER_MAX:
        kname = _cat_kernel(ctx, len(sources))
        block = ctx.tunable(f"{kname.lstrip('_').upper()}_BLOCK", 1024, "elements per program")
        wide = "None" if ctx.nvidia else "True"
        ctx.line(f"_cat_into({kname}, {out}, {dim}, [{', '.join(sources)}], {block}, {wide})")
    else:
        ctx.line("at = 0")
        for tv in sources:
            ctx.line(f"_copy_into({out}.narrow({dim}, at, {tv}.shape[{dim}]), {tv})")
            ctx.line(f"at += {tv}.shape[{dim}]")
    ctx.cats.append((dim, names, out, val(node).dtype))
    ctx.bind(node, out)


def _cat_kernel(ctx: Context, count: int) -> str:
    """A kernel joining ``count`` sources, each read as [outer, its size along the dim, inner] (strides ``s``),
    along the middle dim; ``end{j}``: where source j's slice ends in the output."""
    kname = ctx.fresh("_cat")
    params = ["out_ptr", *(f"p{j}" for j in range(count)), "n", "size", "inner"]
    params += [f"s{j}_{d}" for j in range(count) for d in range(3)] + [f"end{j}" for j in range(count)]
    params += ["IDX64: tl.constexpr", "BLOCK: tl.constexpr"]
    lines = ["    offs = _pid(0, IDX64) * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < n",
             "    k = offs % inner", "    r = offs // inner", "    c = r % size", "    o = r // size"]
    for j in range(count):
        if j == 0:
            lines += ["    c0 = c", "    in0 = mask & (c < end0)"]
        else:
            lines += [f"    c{j} = c - end{j - 1}", f"    in{j} = mask & (c >= end{j - 1}) & (c < end{j})"]
        lines += [f"    v{j} = tl.load(p{j} + o * s{j}_0 + c{j} * s{j}_1 + k * s{j}_2, mask=in{j}, other=0)",
                  f"    v{j} = v{j}.to(out_ptr.dtype.element_ty)"]
        lines.append("    v = v0" if j == 0 else f"    v = tl.where(in{j}, v{j}, v)")
    lines.append("    tl.store(out_ptr + offs, v, mask=mask)")
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):",
                                   f"    # cat of {count} sources: each output element loads from the one holding it",
                                   *lines]))
    return kname


def _longest_prefix_cat(ctx: Context, dim: int, names: tuple[str, ...],
                        dtype: torch.dtype) -> tuple[int, tuple[str, ...], str, torch.dtype] | None:
    """The earlier cat along ``dim`` whose inputs are the longest proper prefix (two or more) of ``names``,
    in the same dtype (a promotion in between could round what a direct copy keeps)."""
    best = None
    for earlier in ctx.cats:
        dim_, inputs, _, dtype_ = earlier
        if (dim_ == dim and dtype_ == dtype and 2 <= len(inputs) < len(names) and names[:len(inputs)] == inputs
                and (best is None or len(inputs) > len(best[1]))):
            best = earlier
    return best


def emit_flip(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    dims = norm_dims(list(args["dims"]), val(node).dim())
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    ctx.line(f"_copy_into({out}, {ctx.tensor(args['self'])}, flip={tuple(dims)!r})")
    ctx.bind(node, out)


def emit_random(ctx: Context, node: Node) -> None:
    """``randn``/``rand`` in forward (a random initial state): the same call on the same generator, so the draft
    draws what the reference draws when both start from the same seed, as the evaluator's calls do."""
    out = ctx.fresh("buf")
    value = val(node)
    ctx.line(f"{out} = torch.{packet(node)}({ctx.shape(value)}, dtype={ctx.dtype(value.dtype)}, device={ctx.device})")
    ctx.bind(node, out)


EMITTERS = {"arange": emit_arange, "gather": emit_gather, "cat": emit_cat, "flip": emit_flip, "randn": emit_random,
            "rand": emit_random}


def _out_digits(ctx: Context, rank: int) -> list[str]:
    """Kernel lines splitting the flat output offset into digits i0..i{rank-1} over sizes n0..n{rank-1} (int32
    offsets and constant sizes on NVIDIA targets where they fit: ``Context.pid`` and ``Context.sizes``)."""
    lines = [f"    offs = {ctx.pid(0)} * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < total", "    rem = offs"]
    for d in reversed(range(rank)):
        lines += [f"    i{d} = rem % n{d}", f"    rem = rem // n{d}"] if d else ["    i0 = rem"]
    return lines


def _gather_kernel(ctx: Context, node: Node, prefix: str, extra_params: list[str], addr_lines: list[str],
                   launch_inputs: list[str], launch_extra: list[str], what: str, fill: str = "0") -> None:
    """``extra_params``: one pointer per extra input (``launch_inputs[1:]``), then the scalars matching
    ``launch_extra``."""
    n_ptrs = len(launch_inputs) - 1
    """A kernel reading x at ``x_off`` (valid where ``ok``) for each output element, written contiguously."""
    rank = val(node).dim()
    kname = ctx.fresh(prefix)
    block = ctx.tunable(f"{kname.lstrip('_').upper()}_BLOCK", ctx.block(val(node).numel(), 16, 1024, 4096),
                        "elements per program")
    params = ["x_ptr", "out_ptr", *extra_params[:n_ptrs], "total", *ctx.sizes([f"n{d}" for d in range(rank)]),
              *extra_params[n_ptrs:], "BLOCK: tl.constexpr", *ctx.idx_param()]
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}",
                                  *_out_digits(ctx, rank), "    x_off = offs * 0", "    ok = mask", *addr_lines,
                                  f"    v = tl.load(x_ptr + x_off, mask=ok, other={fill})",
                                  f"    v = tl.where(ok, v, {fill})",
                                  "    tl.store(out_ptr + offs, _cast_out(v, out_ptr), mask=mask)"]))
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    launch = [launch_inputs[0], out, *launch_inputs[1:], f"{out}.numel()"]
    launch += [f"{out}.shape[{d}]" for d in range(rank)] + launch_extra + [f"BLOCK={block}"]
    launch += ctx.idx_launch([out, *launch_inputs])
    ctx.launch(f"{kname}[(max(1, triton.cdiv({out}.numel(), {block})),)]", launch)
    ctx.bind(node, out)


def emit_index(ctx: Context, node: Node) -> None:
    """Advanced indexing ``x[..., i, j, ...]`` with the index tensors on consecutive dims (broadcast
    together into one block of output dims); index_select is the one-tensor case."""
    args = schema_args(node)
    x = args["self"]
    xr = val(x).dim()
    if "indices" in args:
        indices = list(args["indices"])
    else:
        indices = [None] * norm_dims(args["dim"], xr)[0] + [args["index"]]
    tensor_dims = [d for d, t in enumerate(indices) if t is not None]
    if tensor_dims != list(range(tensor_dims[0], tensor_dims[-1] + 1)):
        raise LoweringError("no Triton lowering for aten.index.Tensor with non-adjacent index tensors")
    first, last = tensor_dims[0], tensor_dims[-1]
    brank = val(node).dim() - (xr - len(tensor_dims))  # rank of the broadcast index block in the output
    xv = ctx.tensor(x)
    lines = [f"    x_off += i{d} * xs{d}" for d in range(first)]  # leading dims map straight through
    params, inputs = [], [xv]
    block_shape = [ctx.sym(s) for s in val(node).shape[first:first + brank]]
    extra_index = []
    for k, d in enumerate(tensor_dims):
        tv = ctx.tensor(indices[d])
        params.append(f"j{k}_ptr")
        inputs.append(tv)
        addr = " + ".join(f"i{first + b} * j{k}s{b}" for b in range(brank)) or "0"
        lines += [f"    j{k} = tl.load(j{k}_ptr + {addr}, mask=mask, other=0).to(tl.int64)",
                  f"    j{k} = tl.where(j{k} < 0, j{k} + xn{d}, j{k})", f"    x_off += j{k} * xs{d}"]
        expanded = f"{tv}.expand({', '.join(block_shape)})" if block_shape else tv
        extra_index += [f"{expanded}.stride({b})" for b in range(brank)]
    for d in range(last + 1, xr):  # trailing dims follow the index block in the output
        lines.append(f"    x_off += i{d - last - 1 + first + brank} * xs{d}")
    params += [f"xs{d}" for d in range(xr)] + [f"xn{d}" for d in range(xr)]
    params += [f"j{k}s{b}" for k in range(len(tensor_dims)) for b in range(brank)]
    extra = [f"{xv}.stride({d})" for d in range(xr)] + [f"{xv}.shape[{d}]" for d in range(xr)] + extra_index
    what = f"x[{', '.join(':' if t is None else 'idx' for t in indices)}]"
    _gather_kernel(ctx, node, "_index", params, lines, inputs, extra, what)


def emit_pad(ctx: Context, node: Node) -> None:
    """constant_pad_nd: output position o reads input o - pad_before (pairs from the last dim back)."""
    args = schema_args(node)
    x = args["self"]
    pad = list(args["pad"])
    rank = val(x).dim()
    before = [0] * rank
    for k in range(len(pad) // 2):
        before[rank - 1 - k] = pad[2 * k]
    lines = []
    for d in range(rank):
        lines += [f"    s{d} = i{d} - {ctx.sym(before[d])}", f"    ok = ok & (s{d} >= 0) & (s{d} < xn{d})",
                  f"    x_off += s{d} * xs{d}"]
    xv = ctx.tensor(x)
    params = [f"xs{d}" for d in range(rank)] + [f"xn{d}" for d in range(rank)]
    extra = [f"{xv}.stride({d})" for d in range(rank)] + [f"{xv}.shape[{d}]" for d in range(rank)]
    value = args.get("value", 0)
    _gather_kernel(ctx, node, "_pad", params, lines, [xv], extra, f"constant pad {pad}", fill=ctx.sym(value))


def emit_repeat(ctx: Context, node: Node) -> None:
    """repeat: output position o reads input o mod size along each of the input's (trailing) dims."""
    args = schema_args(node)
    x = args["self"]
    xr, rank = val(x).dim(), val(node).dim()
    lines = []
    for d in range(xr):
        lines.append(f"    x_off += (i{rank - xr + d} % xn{d}) * xs{d}")
    xv = ctx.tensor(x)
    params = [f"xs{d}" for d in range(xr)] + [f"xn{d}" for d in range(xr)]
    extra = [f"{xv}.stride({d})" for d in range(xr)] + [f"{xv}.shape[{d}]" for d in range(xr)]
    _gather_kernel(ctx, node, "_repeat", params, lines, [xv], extra, "repeat")


EMITTERS.update({"index": emit_index, "_unsafe_index": emit_index, "index_select": emit_index,
                 "constant_pad_nd": emit_pad, "repeat": emit_repeat})
