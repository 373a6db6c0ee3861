"""Scan template: inclusive scans along the last dim, ROWS_PER_PROGRAM rows per program.

Each program walks its rows in BLOCK_SIZE column blocks: a block is scanned with ``tl.cumsum``/``tl.cumprod``
or ``tl.associative_scan`` (value/index pairs for cummax/cummin, log-add-exp for logcumsumexp), combined
with the running carry of the previous blocks, stored, and the carry becomes the block's last valid
prefix. Masked lanes load the scan's identity and sit after every valid lane, so they never reach a stored
prefix; any power-of-two BLOCK_SIZE / ROWS_PER_PROGRAM is correct for any shape.
"""

from __future__ import annotations

from kernelevolve.aten.lowering import Candidate, wrap_call
from kernelevolve.aten.op import AtenOp

COMBINES = {
    "cummax": '''
@triton.jit
def _cummax_combine(v1, i1, v2, i2):
    # v2 comes later in the row; ">=" lets the later position win ties (ATen reports the last index)
    take = v2 >= v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)
''',
    "cummin": '''
@triton.jit
def _cummin_combine(v1, i1, v2, i2):
    # v2 comes later in the row; "<=" lets the later position win ties (ATen reports the last index)
    take = v2 <= v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)
''',
    "logcumsumexp": '''
@triton.jit
def _logaddexp_combine(a, b):
    # log(exp(a) + exp(b)) = max + log(1 + exp(min - max)); two -inf stay -inf (no inf - inf). log(1 + t)
    # instead of log1p(t) costs at most ~1e-7 absolute (t <= 1) and keeps the combine free of calls.
    hi = tl.maximum(a, b)
    lo = tl.minimum(a, b)
    r = hi + tl.log(1.0 + tl.exp(lo - hi))
    return tl.where(lo == float("-inf"), hi, r)
''',
}
# kind -> (identity loaded by masked lanes, block scan lines producing y (and yi), carry combine lines)
SCANS = {
    "cumsum": ("0", "y = tl.cumsum(x, axis=1) + carry[:, None]"),
    "cumprod": ("1", "y = tl.cumprod(x, axis=1) * carry[:, None]"),
    "cummax": ("fill", "y, yi = tl.associative_scan((x, idx), 1, _cummax_combine)\n"
                       "y, yi = _cummax_combine(carry[:, None], carry_i[:, None], y, yi)"),
    "cummin": ("fill", "y, yi = tl.associative_scan((x, idx), 1, _cummin_combine)\n"
                       "y, yi = _cummin_combine(carry[:, None], carry_i[:, None], y, yi)"),
    "logcumsumexp": ('float("-inf")', "y = tl.associative_scan(x, 1, _logaddexp_combine)\n"
                                      "y = _logaddexp_combine(carry[:, None], y)"),
}
_FILL = {"cummax": "_lowest(x.dtype)", "cummin": "_highest(x.dtype)"}
_INIT = {"cumsum": "0", "cumprod": "1", "logcumsumexp": 'float("-inf")'}


def build(op: AtenOp) -> Candidate:
    kind = op.kernel
    other, scan_lines = SCANS[kind]
    indexed = kind in ("cummax", "cummin")
    name = op.kernel_name
    body = "\n".join(f"        {line}" for line in scan_lines.split("\n"))
    idx_lines = ("        idx = tl.broadcast_to(cols[None, :].to(tl.int64), (ROWS_PER_PROGRAM, BLOCK_SIZE))\n"
                 if indexed else "")
    init = "fill" if indexed else _INIT[kind]
    carry_i = "    carry_i = tl.zeros((ROWS_PER_PROGRAM,), tl.int64)\n" if indexed else ""
    store_i = ("        tl.store(idx_ptr + offs, yi, mask=mask)\n"
               "        carry_i = tl.sum(tl.where(last, yi, 0), axis=1)\n") if indexed else ""
    idx_param = "idx_ptr, " if indexed else ""
    constexprs = ("ACC: tl.constexpr, OUT_BF16: tl.constexpr, BLOCK_SIZE: tl.constexpr, "
                  "ROWS_PER_PROGRAM: tl.constexpr")
    kernel = f'''
@triton.jit
def {name}(x_ptr, out_ptr, {idx_param}n_rows, n_cols, fill, {constexprs}):
    rows = tl.program_id(0).to(tl.int64) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)
    row_ok = rows < n_rows
    cols0 = tl.arange(0, BLOCK_SIZE)
    carry = tl.full((ROWS_PER_PROGRAM,), {init}, ACC)
{carry_i}    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + cols0
        mask = row_ok[:, None] & (cols < n_cols)[None, :]
        offs = rows[:, None] * n_cols + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other={other}).to(ACC)
{idx_lines}{body}
        out = y
        if OUT_BF16:
            out = _rtne_bf16(y)  # round to nearest even, like ATen
        tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)
        # the carry is the last valid prefix of this block (exact: one lane selected, the rest add 0)
        last = (cols0 == tl.minimum(n_cols - start, BLOCK_SIZE) - 1)[None, :]
        carry = tl.sum(tl.where(last, y, 0), axis=1)
{store_i}'''
    kernels = COMBINES.get(kind, "") + "\n" + kernel
    widen = op.opt("otype") == "_sum_type(x.dtype)"
    second = "\n        idx = torch.empty(x.shape, dtype=torch.int64, device=x.device)" if indexed else ""
    ret = "res, idx" if indexed else "res"
    fill = _FILL.get(kind, "0")
    forward = f"""        n_cols = x.shape[-1] if x.dim() else 1
        n_rows = math.prod(x.shape[:-1])
        res = torch.empty(x.shape, dtype={op.opt('otype')}, device=x.device){second}
        grid = (max(1, triton.cdiv(n_rows, ROWS_PER_PROGRAM)),)
{wrap_call(f"        {name}[grid]", ["x", ret, "n_rows", "n_cols", fill, f"ACC=_acc_type(x.dtype, {widen})",
                                      "OUT_BF16=res.dtype == torch.bfloat16", "BLOCK_SIZE=BLOCK_SIZE",
                                      "ROWS_PER_PROGRAM=ROWS_PER_PROGRAM", "num_warps=NUM_WARPS",
                                      "num_stages=NUM_STAGES"])}
        return {ret}
"""
    scanned = "value/index pairs" if indexed else "fp32 for floating inputs"
    explanation = f"""Inclusive ``{kind}`` along the last dim. Each program owns ROWS_PER_PROGRAM rows and walks
them in BLOCK_SIZE column blocks: the block is scanned in registers ({scanned}), combined with the carry of
the previous blocks, stored rounded once to ATen's output dtype, and its last valid prefix becomes the next
carry. Reads and writes each element once; the carry makes the column loop sequential, so parallelism comes
from rows (expected to be bandwidth-bound for thousands of rows, latency-bound for a few long ones)."""
    generic = kind not in ("cumsum", "cumprod")  # a combine function, not a built-in scan
    # A 64-wide associative scan fits in two warps: with four, the cross-warp exchange of every block's
    # prefix dominates. One warp and two rows per program measured 5-7.7x faster on an H200 (the budget-6
    # search's winner for cummax, cummin and logcumsumexp: benchmarks/results/aten_sweep_h200_budget6.md).
    tunables = [("BLOCK_SIZE", 64 if generic else 512, "columns per block; any power of two in [16, 8192]"),
                ("ROWS_PER_PROGRAM", 2, "rows per program; any power of two in [1, 64]"),
                ("NUM_WARPS", 1 if generic else 4, "any of 1, 2, 4, 8, 16"),
                ("NUM_STAGES", 1 if generic else 2, "1..5; pipelines the column loop's loads on GPUs")]
    return Candidate(title=f"Last-dim scan {op.name}: blockwise scan plus a running carry, ROWS_PER_PROGRAM rows",
                     tags=["scan", "row-wise", "memory-bound", "aten"], explanation=explanation,
                     tunables=tunables, kernels=kernels, forward=forward)
