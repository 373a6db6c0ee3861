"""Scatters along one dim: scatter (src or value; plain or reduce='add') and scatter_add, any dim and rank.

The output starts as a copy of ``self`` (the strided ``_copy_into``); one flat kernel over the index tensor
then reads, for each index element at position p, the source at p (its own strides: ``src`` may be larger
than ``index``) and writes it at p with the ``dim`` digit replaced by the index value (negative values count
from the end). Plain scatters store: ATen leaves the winner among duplicate indices unspecified, and with
distinct indices per row the result is exact. Accumulating ones use ``tl.atomic_add`` (relaxed): integer sums
are exact, fp32 and fp64 sums differ from ATen's sequential order by rounding only. Types without atomics
(fp16, bf16: fp32; bool, 8- and 16-bit integers: int32) accumulate in a scratch buffer of the wider type,
which a last kernel converts back (rounded once, where ATen rounds per add; integers wrap as ATen's do).
"""

from __future__ import annotations

import torch
from torch.fx import Node

from kernelevolve.lowering.context import Context, compute_type, packet, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import decompose, norm_dims, schema_args
from kernelevolve.lowering.pointwise_ops import lit

_SCRATCH = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.bool: torch.int32,
            torch.int8: torch.int32, torch.uint8: torch.int32, torch.int16: torch.int32}


def _mode(node: Node, args: dict) -> str:
    """'store' or 'add'."""
    if packet(node) == "scatter_add":
        return "add"
    reduce = args.get("reduce")
    if reduce is None:
        return "store"
    if reduce == "add":
        return "add"
    raise LoweringError(f"no Triton lowering for {node.target} with reduce={reduce!r} (only 'add')")


def emit_scatter(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x, index, src = args["self"], args["index"], args.get("src", args.get("value"))
    mode = _mode(node, args)
    out_val = val(node)
    rank = val(index).dim()
    xrank = val(x).dim()
    if rank != xrank:
        raise LoweringError(f"no Triton lowering for {node.target} with index rank {rank} != self rank {xrank}")
    dim = norm_dims(args["dim"], xrank)[0] if xrank else 0
    scratch = _SCRATCH.get(out_val.dtype) if mode == "add" else None
    kname = ctx.fresh("_scatter")
    tag = kname.lstrip("_").upper()
    block = ctx.tunable(f"{tag}_BLOCK", ctx.block(val(index).numel(), 16, 1024, 4096), "index elements per program")
    tensor_src = isinstance(src, Node)
    fixed = isinstance(src, (bool, int, float))  # scatter.value's value, fixed by the trace
    dims = max(rank, 1)
    sizes = [f"n{d}" for d in range(dims)]
    js, ss, os = ([f"{p}s{d}" for d in range(dims)] for p in ("j", "s", "o"))
    strides = {"j_off": js, "o_off": [("0" if d == dim else s) for d, s in enumerate(os)]}
    if tensor_src:
        strides["s_off"] = ss
    lines = ["    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < total",
             *decompose("offs", sizes, strides, "t"),
             "    j = tl.load(j_ptr + j_off, mask=mask, other=0).to(tl.int64)",
             "    j = tl.where(j < 0, j + n_dim, j)  # negative indices count from the end",
             "    mask = mask & (j >= 0) & (j < n_dim)  # an index out of range writes nothing (ATen raises there)",
             f"    dst = y_ptr + o_off + j * os{dim}"]
    if tensor_src:
        lines.append("    v = tl.load(s_ptr + s_off, mask=mask, other=0)")
    else:  # scatter.value: a literal where the trace fixed it (exact in fp64), else a launch argument
        lines.append(f"    v = tl.zeros([BLOCK], {compute_type(out_val.dtype)}) + {lit(src) if fixed else 'value'}")
    if mode == "add":
        lines.append("    tl.atomic_add(dst, v.to(y_ptr.dtype.element_ty), mask=mask, sem='relaxed')")
    else:
        lines.append("    tl.store(dst, _cast_out(v, y_ptr), mask=mask)" if not tensor_src else
                     "    tl.store(dst, v.to(y_ptr.dtype.element_ty), mask=mask)  # same dtype: bits kept")
    scalar = [] if tensor_src or fixed else ["value"]
    params = [*(["s_ptr"] if tensor_src else scalar), "j_ptr", "y_ptr", "total", "n_dim", *sizes, *js,
              *(ss if tensor_src else []), *os, "BLOCK: tl.constexpr"]
    what = f"{node.target} along dim {dim}" + (f", accumulated in {scratch}" if scratch else "")
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}", *lines]))

    out, acc = output_from(ctx, node, x, scratch)
    jv = ctx.tensor(index)
    shape = [f"{jv}.shape[{d}]" for d in range(rank)] or ["1"]
    launch = [*([ctx.tensor(src)] if tensor_src else [ctx.sym(src)] if scalar else []), jv, acc, f"{jv}.numel()",
              f"{acc}.shape[{dim}]" if xrank else "1", *shape]
    for t in [jv, *([ctx.tensor(src)] if tensor_src else []), acc]:
        launch += [f"{t}.stride({d})" for d in range(rank)] or ["0"]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({jv}.numel(), {block})),)]", [*launch, f"BLOCK={block}"])
    if scratch is not None:
        _convert(ctx, acc, out)
    ctx.bind(node, out)


def output_from(ctx: Context, node: Node, x: Node, scratch: str | None) -> tuple[str, str]:
    """The node's output and the buffer the kernel writes (a wider ``scratch`` dtype where the output's has no
    atomics, converted back by ``_convert``), that buffer holding a copy of ``x`` to write into."""
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    acc = out
    if scratch is not None:
        acc = ctx.fresh("buf")
        ctx.line(f"{acc} = torch.empty({ctx.shape(val(node))}, dtype={scratch}, device={ctx.device})")
    ctx.line(f"_copy_into({acc}, {ctx.tensor(x)})")
    return out, acc


def _convert(ctx: Context, acc: str, out: str, prefix: str = "_scatter_cast") -> None:
    """``out`` <- ``acc`` (both contiguous, same shape), rounded to out's dtype once (index_put.py too)."""
    kname = ctx.fresh(prefix)
    block = ctx.tunable(f"{kname.lstrip('_').upper()}_BLOCK", 1024, "elements per program")
    ctx.kernels.append("\n".join([
        "@triton.jit", f"def {kname}(a_ptr, y_ptr, n, BLOCK: tl.constexpr):",
        "    # the accumulated scatter rounded once to the output dtype",
        "    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
        "    v = tl.load(a_ptr + offs, mask=offs < n, other=0)",
        "    if y_ptr.dtype.element_ty == tl.int1:",
        "        v = v != 0",
        "    tl.store(y_ptr + offs, _cast_out(v, y_ptr), mask=offs < n)"]))
    ctx.launch(f"{kname}[(max(1, triton.cdiv({out}.numel(), {block})),)]",
               [acc, out, f"{out}.numel()", f"BLOCK={block}"])


EMITTERS = {"scatter": emit_scatter, "scatter_add": emit_scatter}
