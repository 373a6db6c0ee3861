"""Gather/index template: row gathers, elementwise gathers, scatters (store or atomic add) and searches.

Row gathers (index_select, embedding, index.Tensor) run a 2-D grid: ROWS_PER_PROGRAM indices by a
BLOCK_SIZE slice of the gathered row, so each program copies contiguous row segments. Elementwise gathers
(gather, take) are flat over the output. Scatters first copy the destination (or allocate zeros) and then
add or store every source element at its indexed position: accumulating ones use ``tl.atomic_add``
(fp32 or integer: order-independent up to fp32 rounding), plain ones rely on distinct indices per row.
bucketize is a branch-free binary search, log2(len) + 1 dependent loads per element.
"""

from __future__ import annotations

from kernelevolve.aten.lowering import Candidate
from kernelevolve.aten.op import AtenOp

_COPY = '''
@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)
'''
_ROWS = '''
@triton.jit
def {name}({ptrs}, n_idx, row_len, n_src_rows, BLOCK_SIZE: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    row_ok = rows < n_idx
    target = tl.load(idx_ptr + rows, mask=row_ok, other=0).to(tl.int64)
    target = tl.where(target < 0, target + n_src_rows, target)  # negative indices count from the end
    mask = row_ok[:, None] & (cols < row_len)[None, :]
{body}
'''
_ROW_BODIES = {
    "index_select": "    vals = tl.load(x_ptr + target[:, None] * row_len + cols[None, :], mask=mask)\n"
                    "    tl.store(out_ptr + rows[:, None] * row_len + cols[None, :], vals, mask=mask)",
    "index_add": "    vals = tl.load(src_ptr + rows[:, None] * row_len + cols[None, :], mask=mask)\n"
                 "    tl.atomic_add(out_ptr + target[:, None] * row_len + cols[None, :], vals, mask=mask)",
    "embedding_backward": "    vals = tl.load(grad_ptr + rows[:, None] * row_len + cols[None, :], mask=mask)\n"
                          "    tl.atomic_add(out_ptr + target[:, None] * row_len + cols[None, :], vals, mask=mask)",
}
_FLAT = '''
@triton.jit
def {name}({ptrs}, n, k, n_src, src_k, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    target = tl.load(idx_ptr + offs, mask=mask, other=0).to(tl.int64)
    target = tl.where(target < 0, target + n_src, target)  # negative indices count from the end
    row = offs // k
{body}
'''
_FLAT_BODIES = {
    "gather": "    tl.store(out_ptr + offs, tl.load(x_ptr + row * n_src + target, mask=mask), mask=mask)",
    "take": "    tl.store(out_ptr + offs, tl.load(x_ptr + target, mask=mask), mask=mask)",
    "scatter_add": "    vals = tl.load(src_ptr + row * src_k + offs % k, mask=mask)\n"
                   "    tl.atomic_add(out_ptr + row * n_src + target, vals, mask=mask)",
    "scatter": "    vals = tl.load(src_ptr + row * src_k + offs % k, mask=mask)\n"
               "    tl.store(out_ptr + row * n_src + target, vals, mask=mask)  # indices are distinct per row",
}
_BUCKETIZE = '''
@triton.jit
def {name}(x_ptr, bnd_ptr, out_ptr, n, n_bnd, steps, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float32)
    # lower bound: the number of boundaries strictly below x (right=False), by bisection of [lo, hi)
    lo = tl.zeros([BLOCK_SIZE], tl.int64)
    hi = tl.zeros([BLOCK_SIZE], tl.int64) + n_bnd
    for _ in range(steps):
        active = lo < hi
        mid = (lo + hi) // 2
        b = tl.load(bnd_ptr + mid, mask=mask & active, other=0).to(tl.float32)
        right = active & (b < x)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(active & (b >= x), mid, hi)
    tl.store(out_ptr + offs, lo, mask=mask)
'''
_COPY_LAUNCH = ("        _copy_kernel[(max(1, triton.cdiv(x.numel(), BLOCK_SIZE)),)](x, res, x.numel(), "
                "BLOCK_SIZE=BLOCK_SIZE,\n            num_warps=NUM_WARPS, num_stages=NUM_STAGES)\n")
_GRID2 = "(max(1, triton.cdiv(n_idx, ROWS_PER_PROGRAM)), max(1, triton.cdiv(row_len, BLOCK_SIZE)))"
_LAUNCH2 = "BLOCK_SIZE=BLOCK_SIZE, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM, num_warps=NUM_WARPS, num_stages=NUM_STAGES"
_LAUNCH1 = "BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS, num_stages=NUM_STAGES"


def _forward(op: AtenOp, kind: str, name: str) -> str:
    if kind == "index_select":
        src, idx = op.arg_names
        return f"""        n_src_rows = {src}.shape[0]
        row_len = math.prod({src}.shape[1:])
        n_idx = {idx}.numel()
        res = torch.empty(tuple({idx}.shape) + tuple({src}.shape[1:]), dtype={src}.dtype, device={src}.device)
        grid = {_GRID2}
        {name}[grid](
            {src}, {idx}, res, n_idx, row_len, n_src_rows, {_LAUNCH2})
        return res
"""
    if kind == "index_add":
        return f"""        res = torch.empty(x.shape, dtype=x.dtype, device=x.device)
{_COPY_LAUNCH}        n_src_rows = x.shape[0]
        row_len = math.prod(x.shape[1:])
        n_idx = idx.numel()
        grid = {_GRID2}
        {name}[grid](
            src, idx, res, n_idx, row_len, n_src_rows, {_LAUNCH2})
        return res
"""
    if kind == "embedding_backward":
        return f"""        row_len = grad.shape[-1]
        res = torch.zeros((NUM_WEIGHTS, row_len), dtype=grad.dtype, device=grad.device)  # accumulated into
        n_idx = idx.numel()
        grid = {_GRID2}
        {name}[grid](
            grad, idx, res, n_idx, row_len, NUM_WEIGHTS, {_LAUNCH2})
        return res
"""
    if kind == "bucketize":
        return f"""        res = torch.empty(x.shape, dtype=torch.int64, device=x.device)
        n, n_bnd = x.numel(), bnd.numel()
        {name}[(max(1, triton.cdiv(n, BLOCK_SIZE)),)](
            x, bnd, res, n, n_bnd, n_bnd.bit_length() + 1, {_LAUNCH1})
        return res
"""
    scatter = kind in ("scatter_add", "scatter")
    copy = _COPY_LAUNCH if scatter else ""
    ptrs = "src, idx, res" if scatter else "x, idx, res"
    n_src = "x.numel()" if kind == "take" else "max(x.shape[-1], 1)"
    src_k = "max(src.shape[-1], 1)" if scatter else "1"
    out_shape = "x.shape" if scatter else "idx.shape"
    return f"""        res = torch.empty({out_shape}, dtype=x.dtype, device=x.device)
{copy}        n = idx.numel()
        {name}[(max(1, triton.cdiv(n, BLOCK_SIZE)),)](
            {ptrs}, n, max(idx.shape[-1], 1) if idx.dim() else 1, {n_src}, {src_k}, {_LAUNCH1})
        return res
"""


def build(op: AtenOp) -> Candidate:
    kind = op.kernel
    name = op.kernel_name
    rows = kind in _ROW_BODIES
    if rows:
        first = {"index_select": "x_ptr, idx_ptr, out_ptr", "index_add": "src_ptr, idx_ptr, out_ptr",
                 "embedding_backward": "grad_ptr, idx_ptr, out_ptr"}[kind]
        kernels = _ROWS.format(name=name, ptrs=first, body=_ROW_BODIES[kind])
    elif kind == "bucketize":
        kernels = _BUCKETIZE.format(name=name)
    else:
        first = "src_ptr, idx_ptr, out_ptr" if kind.startswith("scatter") else "x_ptr, idx_ptr, out_ptr"
        kernels = _FLAT.format(name=name, ptrs=first, body=_FLAT_BODIES[kind])
    if kind in ("scatter_add", "scatter", "index_add"):
        kernels = _COPY + kernels
    tunables = [("BLOCK_SIZE", 512 if rows else 1024, "elements per program and row segment; any power of two "
                 "in [16, 8192]")]
    if rows:
        tunables.append(("ROWS_PER_PROGRAM", 4, "indices per program; any power of two in [1, 64]"))
    tunables += [("NUM_WARPS", 4, "any of 1, 2, 4, 8, 16"), ("NUM_STAGES", 1, "1..5; no loop to pipeline")]
    extra = [f"NUM_WEIGHTS = {op.opt('num_weights')}  # the spec's num_weights (rows of the gradient)"] \
        if kind == "embedding_backward" else []
    atomic = kind in ("scatter_add", "index_add", "embedding_backward")
    grid = ("A 2-D grid of ROWS_PER_PROGRAM indices by BLOCK_SIZE columns moves contiguous row segments."
            if rows else "A flat grid over the index tensor, BLOCK_SIZE elements per program.")
    values = ("The destination is first copied (or zeroed) and then updated with tl.atomic_add: fp32 and integer "
              "adds, so the result is independent of order up to fp32 rounding; contention on repeated indices is "
              "expected to make it atomic-bound rather than bandwidth-bound." if atomic else
              "Values are moved without conversion, so outputs match ATen bit for bit; negative indices wrap "
              "like ATen's.")
    knobs = "BLOCK_SIZE / ROWS_PER_PROGRAM" if rows else "BLOCK_SIZE"
    explanation = (f"Kind ``{kind}``. {grid} {values} Every index row, column and element is masked, so any "
                   f"power-of-two {knobs} is correct, empty index tensors included (one idle program is launched).")
    shape = "row-segment gather/scatter on a 2-D grid" if rows else "flat indexed kernel"
    return Candidate(title=f"Index op {op.name}: {shape}",
                     tags=["indexing", "gather", "memory-bound", "aten"], explanation=explanation,
                     tunables=tunables, kernels=kernels, forward=_forward(op, kind, name), extra_host=extra)
