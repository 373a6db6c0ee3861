"""bucketize: each element's bucket among 1-D sorted boundaries, by bisection (any input rank and layout).

One flat kernel over the output: the input is read through its own strides, and a branch-free bisection of
[lo, hi) takes ``n_bnd.bit_length()`` steps (a binary search's most), one dependent boundary load each.
The step is ATen's own (``cus_lower_bound``/``cus_upper_bound``): go right where ``!(b >= x)`` (right=False)
or ``!(b > x)`` (right=True), so a NaN input lands past every boundary, as in ATen. Both sides are compared
in the compute type of their promoted dtype (fp32 for 16-bit floats, exact), as ATen promotes them.
"""

from __future__ import annotations

import torch
from torch.fx import Node

from kernelevolve.lowering.context import Context, compute_type, val
from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.indexing import decompose, schema_args


def emit_bucketize(ctx: Context, node: Node) -> None:
    args = schema_args(node)
    x, bnd = args["self"], args["boundaries"]
    if not isinstance(x, Node):
        raise LoweringError("no Triton lowering for aten.bucketize.Scalar (a scalar input)")
    if val(bnd).dim() != 1:
        raise LoweringError(f"no Triton lowering for aten.bucketize with {val(bnd).dim()}-D boundaries (1-D only)")
    ct = compute_type(torch.promote_types(val(x).dtype, val(bnd).dtype))
    step = "b > x" if args.get("right", False) else "b >= x"
    rank = val(x).dim()
    kname = ctx.fresh("_bucketize")
    block = ctx.tunable(f"{kname.lstrip('_').upper()}_BLOCK", ctx.block(val(x).numel(), 16, 1024, 4096),
                        "elements per program")
    sizes, xs = [f"n{d}" for d in range(rank)], [f"xs{d}" for d in range(rank)]
    lines = ["    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < total",
             *decompose("offs", sizes, {"x_off": xs}, "t"),
             f"    x = tl.load(x_ptr + x_off, mask=mask, other=0).to({ct})",
             "    lo = tl.zeros([BLOCK], tl.int64)",
             "    hi = tl.zeros([BLOCK], tl.int64) + n_bnd",
             "    for _ in range(steps):",
             "        active = lo < hi",
             "        mid = lo + (hi - lo) // 2",
             f"        b = tl.load(b_ptr + mid * bs, mask=mask & active, other=0).to({ct})",
             f"        right = active & ~({step})",
             "        lo = tl.where(right, mid + 1, lo)",
             "        hi = tl.where(active & ~right, mid, hi)",
             "    tl.store(y_ptr + offs, lo.to(y_ptr.dtype.element_ty), mask=mask)"]
    params = ["x_ptr", "b_ptr", "y_ptr", "total", "n_bnd", "bs", "steps", *sizes, *xs, "BLOCK: tl.constexpr"]
    what = f"bucketize (right={bool(args.get('right', False))}) over 1-D boundaries, compared in {ct}"
    ctx.kernels.append("\n".join(["@triton.jit", f"def {kname}({', '.join(params)}):", f"    # {what}", *lines]))
    out = ctx.fresh("buf")
    ctx.empty(out, node)
    xv, bv = ctx.tensor(x), ctx.tensor(bnd)
    launch = [xv, bv, out, f"{out}.numel()", f"{bv}.shape[0]", f"{bv}.stride(0)", f"{bv}.shape[0].bit_length()"]
    launch += [f"{xv}.shape[{d}]" for d in range(rank)] + [f"{xv}.stride({d})" for d in range(rank)]
    ctx.launch(f"{kname}[(max(1, triton.cdiv({out}.numel(), {block})),)]", [*launch, f"BLOCK={block}"])
    ctx.bind(node, out)


EMITTERS = {"bucketize": emit_bucketize}
