"""Advanced-index stores: index_put (``x[i, j] = v``, ``x.index_put_(..., accumulate=True)``), which the
decompositions of index_add, embedding_dense_backward and friends produce; ``_unsafe_index_put`` alike.

``indices`` holds one integer tensor or None per leading dim of ``self`` (missing trailing entries are full
dims). The index tensors broadcast together to a shape B; the indexed shape is ``self``'s with the indexed
dims replaced by B, in place where those dims are adjacent, else in front (ATen's rule); ``values``
broadcasts to it. The output starts as a copy of ``self``; one flat kernel over the indexed shape then reads,
for each position, ``values`` there (its expanded strides) and each index tensor at the position's B digits
(negative values count from the end) and writes to ``self``'s element at those indices and the full dims'
digits. Plain stores leave the winner among duplicate indices unspecified, as ATen does; accumulating ones
use ``tl.atomic_add`` (relaxed): integer sums are exact, fp32/fp64 ones differ from ATen's order by rounding
only. Types without atomics (fp16, bf16, bool, 8- and 16-bit integers) accumulate in a wider scratch buffer
rounded back once, as scatter.py does. Boolean-mask indices are refused.
"""

from __future__ import annotations

import torch
from torch.fx import Node

from kernelevolve.lowering.context import Context, op_name, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import decompose, schema_args
from kernelevolve.lowering.scatter import _SCRATCH, _convert, output_from


def _layout(node: Node, indices: list, xrank: int) -> tuple[list[int], list[tuple[str, int]]]:
    """The indexed dims of ``self`` and the indexed shape's dims: ('b', i) for B's dim i, ('s', d) for
    ``self``'s full dim d."""
    if len(indices) > xrank:
        raise LoweringError(f"no Triton lowering for {op_name(node)} with {len(indices)} indices for a rank-{xrank} "
                            "self")
    where = [d for d, i in enumerate(indices) if i is not None]
    for d in where:
        dtype = val(indices[d]).dtype
        if dtype in (torch.bool, torch.uint8):
            raise LoweringError(f"no Triton lowering for {op_name(node)} with boolean-mask indices")
        if dtype not in (torch.int64, torch.int32):
            raise LoweringError(f"no Triton lowering for {op_name(node)} with {dtype} indices")
    brank = max((val(indices[d]).dim() for d in where), default=0)
    bdims = [("b", i) for i in range(brank)]
    full = [("s", d) for d in range(xrank) if d not in where]
    if where and where == list(range(where[0], where[-1] + 1)):  # adjacent: B replaces them in place
        return where, [("s", d) for d in range(where[0])] + bdims + [("s", d) for d in range(where[-1] + 1, xrank)]
    return where, bdims + full


def _b_hint(ctx: Context, idx: list[torch.Tensor], i: int) -> int:
    """Traced size of dim ``i`` of the index tensors' broadcast shape (right-aligned, as torch broadcasts)."""
    brank = max(t.dim() for t in idx)
    return max([1, *(ctx.hint(t.shape[i - brank + t.dim()]) for t in idx if i - brank + t.dim() >= 0)])


def _b_sizes(idx: list[torch.Tensor], names: list[str]) -> list[str]:
    """Host sizes of the index tensors' broadcast shape: per dim, that of the first tensor whose traced size
    there is not a fixed 1 (torch.export keeps size-1 dims static; the trace guards the others equal)."""
    brank = max((t.dim() for t in idx), default=0)
    sizes = []
    for i in range(brank):
        sizes.append("1")
        for t, name in zip(idx, names, strict=True):
            d = i - brank + t.dim()
            if d >= 0 and not (isinstance(t.shape[d], int) and t.shape[d] == 1):
                sizes[-1] = f"{name}.shape[{d}]"
                break
    return sizes


def emit_index_put(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x, indices, values, accumulate = args["self"], list(args["indices"]), args["values"], bool(args["accumulate"])
    if not isinstance(values, Node):
        raise LoweringError(f"no Triton lowering for {op_name(node)} with non-tensor values")
    out_val = val(node)
    xrank = out_val.dim()
    where, dims = _layout(node, indices, xrank)
    rank = len(dims)
    vrank = val(values).dim()
    scratch = _SCRATCH.get(out_val.dtype) if accumulate else None
    kname = ctx.fresh("_index_put")
    tag = kname.lstrip("_").upper()

    hint = 1  # the traced size of the indexed shape, for the block default
    for kind, d in dims:
        hint *= _b_hint(ctx, [val(indices[w]) for w in where], d) if kind == "b" else ctx.hint(out_val.shape[d])
    block = ctx.tunable(f"{tag}_BLOCK", ctx.block(hint, 16, 1024, 4096), "indexed elements per program")

    k = len(where)
    sizes = [f"n{r}" for r in range(rank)]
    vs = [f"vs{r}" for r in range(rank)]
    os = [f"os{r}" if kind == "s" else "0" for r, (kind, _) in enumerate(dims)]
    js = [[f"j{q}s{r}" if kind == "b" else "0" for r, (kind, _) in enumerate(dims)] for q in range(k)]
    strides = {"v_off": vs, "o_off": os, **{f"j{q}_off": js[q] for q in range(k)}}
    lines = ["    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < total",
             *(ln for ln in decompose("offs", sizes, strides, "t") if not (" += " in ln and ln.endswith(" * 0"))),
             "    dst = y_ptr + o_off"]
    for q in range(k):
        lines += [f"    j{q} = tl.load(j{q}_ptr + j{q}_off, mask=mask, other=0).to(tl.int64)",
                  f"    j{q} = tl.where(j{q} < 0, j{q} + m{q}, j{q})  # negative indices count from the end",
                  f"    mask = mask & (j{q} >= 0) & (j{q} < m{q})  # out of range: no write (ATen raises there)",
                  f"    dst += j{q} * ot{q}"]
    lines.append("    v = tl.load(v_ptr + v_off, mask=mask, other=0)")
    if accumulate:
        lines.append("    tl.atomic_add(dst, v.to(y_ptr.dtype.element_ty), mask=mask, sem='relaxed')")
    else:
        lines.append("    tl.store(dst, v.to(y_ptr.dtype.element_ty), mask=mask)")
    params = ["v_ptr", *(f"j{q}_ptr" for q in range(k)), "y_ptr", "total", *(f"m{q}" for q in range(k)),
              *(f"ot{q}" for q in range(k)), *sizes, *vs, *(o for o in os if o != "0"),
              *(s for q in range(k) for s in js[q] if s != "0"), "BLOCK: tl.constexpr"]
    what = (f"{op_name(node)} on dims {where}" + (", accumulated" if accumulate else ", stored")
            + (f" in {scratch}" if scratch else ""))
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}", *lines]))

    out, acc = output_from(ctx, node, x, scratch)
    jv = [ctx.tensor(indices[d]) for d in where]
    bsizes = _b_sizes([val(indices[w]) for w in where], jv)
    je = jv
    if len(jv) > 1:  # broadcast together (size-1 dims are static in the trace)
        je = [ctx.fresh("idx") for _ in jv]
        for j, e in zip(jv, je, strict=True):
            ctx.line(f"{e} = {j}.expand(({', '.join(bsizes)}{',' if len(bsizes) == 1 else ''}))")
    ishape = [bsizes[d] if kind == "b" else f"{acc}.shape[{d}]" for kind, d in dims]
    vv = ctx.fresh("vals")
    src = ctx.tensor(values)
    if vrank > rank:  # leading size-1 dims of values (ATen strips them)
        src = f"{src}[{', '.join(['0'] * (vrank - rank))}]"
    ctx.line(f"{vv} = {src}.expand(({', '.join(ishape)}{',' if len(ishape) == 1 else ''}))")
    launch = [vv, *je, acc, f"{vv}.numel()", *(f"{acc}.shape[{d}]" for d in where),
              *(f"{acc}.stride({d})" for d in where), *(f"{vv}.shape[{r}]" for r in range(rank)),
              *(f"{vv}.stride({r})" for r in range(rank)),
              *(f"{acc}.stride({d})" for kind, d in dims if kind == "s"),
              *(f"{e}.stride({d})" for e in je for kind, d in dims if kind == "b")]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({vv}.numel(), {block})),)]", [*launch, f"BLOCK={block}"])
    if scratch is not None:
        _convert(ctx, acc, out, "_index_put_cast")
    ctx.bind(node, out)


EMITTERS = {"index_put": emit_index_put, "index_put_": emit_index_put, "_unsafe_index_put": emit_index_put}
