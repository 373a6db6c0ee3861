"""Row-reduction template: ROWS_PER_PROGRAM rows per program, a BLOCK_SIZE column loop into 2-D accumulators.

The input is viewed as [n_rows, n_cols] (the reduced last dim is contiguous); each program keeps a
[ROWS_PER_PROGRAM, BLOCK_SIZE] accumulator of elementwise partials (no cross-thread traffic in the loop)
and reduces it along axis 1 once at the end. Two-pass kinds (var/std, logsumexp) re-read the row for the
second pass. Full reductions launch the same kernel twice: once over CHUNK_SIZE-long chunks of the
flattened input into fp32/int64 partials, once over the partials. Every row, column and chunk is masked.
"""

from __future__ import annotations

from kernelevolve.aten.lowering import Candidate, wrap_call
from kernelevolve.aten.op import AtenOp

_Z = "acc = tl.zeros((ROWS_PER_PROGRAM, BLOCK_SIZE), ACC)"
# tl.max/tl.min skip NaN lanes, but ATen's amax/amin propagate NaN: a row holding one returns NaN
_NAN_ROWS = ("nan_sum = tl.sum(tl.where(acc != acc, acc, 0), axis=1)  # NaN exactly when the row holds one\n"
             "res = tl.where(nan_sum != nan_sum, nan_sum, res)")
_ARG_INIT = ("best = tl.full((ROWS_PER_PROGRAM, BLOCK_SIZE), fill, ACC)\n"
             "best_i = tl.zeros((ROWS_PER_PROGRAM, BLOCK_SIZE), tl.int64)")
_ARG_UPDATE = ("take = mask & (x {cmp} best)  # strict: each lane keeps its first occurrence\n"
               "best = tl.where(take, x, best)\n"
               "best_i = tl.where(take, cols[None, :].to(tl.int64), best_i)")
_ARG_FINAL = ("res = tl.{red}(best, axis=1)\n"
              "# first occurrence overall: the smallest column among the lanes holding the extreme value\n"
              "res2 = tl.min(tl.where(best == res[:, None], best_i, n_cols), axis=1)")
_VAR_MID = "mean = tl.sum(acc, axis=1) / n_cols\n" + _Z
_VAR_PASS2 = "d = tl.where(mask, x - mean[:, None], 0.0)\nacc += d * d"
_VAR_FINAL = "var = tl.sum(acc, axis=1) / divisor  # divisor = max(n_cols - correction, 0), as in ATen\n"


def _kind(init, update, final, other="0", mid="", update2="", raw=False, widen=True, outs=1):
    """A reduction kind: accumulator init, per-block update of ``x``, optional second pass, final ``res``.

    ``other`` is what masked lanes load (the identity), ``raw`` loads x unconverted (tests against 0),
    ``widen`` accumulates integers in int64, ``outs`` is 1, 2 (``res`` and ``res2``) or -1 (only ``res2``).
    """
    return dict(init=init, update=update, final=final, other=other, mid=mid, update2=update2, raw=raw,
                widen=widen, outs=outs)


KINDS = {
    "sum": _kind(_Z, "acc += x", "res = tl.sum(acc, axis=1)"),
    "mean": _kind(_Z, "acc += x", "res = tl.sum(acc, axis=1)\nif DIVIDE:\n    res = res / divisor"),
    "amax": _kind("acc = tl.full((ROWS_PER_PROGRAM, BLOCK_SIZE), fill, ACC)",
                  "acc = tl.maximum(acc, x, propagate_nan=tl.PropagateNan.ALL)", "res = tl.max(acc, axis=1)\n"
                  + _NAN_ROWS, "fill", widen=False),
    "amin": _kind("acc = tl.full((ROWS_PER_PROGRAM, BLOCK_SIZE), fill, ACC)",
                  "acc = tl.minimum(acc, x, propagate_nan=tl.PropagateNan.ALL)", "res = tl.min(acc, axis=1)\n"
                  + _NAN_ROWS, "fill", widen=False),
    "max_dim": _kind(_ARG_INIT, _ARG_UPDATE.format(cmp=">"), _ARG_FINAL.format(red="max"), "fill", widen=False,
                     outs=2),
    "min_dim": _kind(_ARG_INIT, _ARG_UPDATE.format(cmp="<"), _ARG_FINAL.format(red="min"), "fill", widen=False,
                     outs=2),
    "argmax": _kind(_ARG_INIT, _ARG_UPDATE.format(cmp=">"), _ARG_FINAL.format(red="max"), "fill", widen=False,
                    outs=-1),
    "argmin": _kind(_ARG_INIT, _ARG_UPDATE.format(cmp="<"), _ARG_FINAL.format(red="min"), "fill", widen=False,
                    outs=-1),
    "prod": _kind("acc = tl.full((ROWS_PER_PROGRAM, BLOCK_SIZE), 1, ACC)", "acc *= x",
                  "# a pairwise tree over the columns: log2(BLOCK_SIZE) halving steps, unrolled\n"
                  "res = acc\n"
                  "for _ in tl.static_range(LOG_BLOCK):\n"
                  "    lo, hi = tl.split(tl.reshape(res, (ROWS_PER_PROGRAM, res.shape[1] // 2, 2)))\n"
                  "    res = lo * hi\n"
                  "res = tl.reshape(res, (ROWS_PER_PROGRAM,))", "1"),
    "var": _kind(_Z, "acc += x", _VAR_FINAL + "res = var", mid=_VAR_MID, update2=_VAR_PASS2),
    "std": _kind(_Z, "acc += x", _VAR_FINAL + "res = tl.sqrt_rn(var)", mid=_VAR_MID, update2=_VAR_PASS2),
    "var_mean": _kind(_Z, "acc += x", _VAR_FINAL + "res = var\nres2 = mean", mid=_VAR_MID, update2=_VAR_PASS2,
                      outs=2),
    "logsumexp": _kind("acc = tl.full((ROWS_PER_PROGRAM, BLOCK_SIZE), float(\"-inf\"), ACC)",
                       "acc = tl.maximum(acc, x)", "res = tl.log(tl.sum(acc, axis=1)) + shift",
                       "float(\"-inf\")",
                       mid="row_max = tl.max(acc, axis=1)\n"
                           "shift = tl.where(tl.abs(row_max) == float(\"inf\"), 0.0, row_max)  # ATen's guard\n"
                           + _Z,
                       update2="acc += tl.where(mask, tl.exp(x - shift[:, None]), 0.0)"),
    "norm2": _kind(_Z, "acc += x * x", "res = tl.sqrt_rn(tl.sum(acc, axis=1))"),
    "norm1": _kind(_Z, "acc += tl.abs(x)", "res = tl.sum(acc, axis=1)"),
    "all": _kind("acc = tl.full((ROWS_PER_PROGRAM, BLOCK_SIZE), 1, tl.int32)",
                 "acc = tl.minimum(acc, (x != 0).to(tl.int32))", "res = tl.min(acc, axis=1) != 0", "1", raw=True,
                 widen=False),
    "any": _kind("acc = tl.zeros((ROWS_PER_PROGRAM, BLOCK_SIZE), tl.int32)",
                 "acc = tl.maximum(acc, (x != 0).to(tl.int32))", "res = tl.max(acc, axis=1) != 0", raw=True,
                 widen=False),
    "count_nonzero": _kind("acc = tl.zeros((ROWS_PER_PROGRAM, BLOCK_SIZE), tl.int64)",
                           "acc += (x != 0).to(tl.int64)", "res = tl.sum(acc, axis=1)", raw=True, widen=False),
}
_FILL = {"amax": "_lowest(x.dtype)", "max_dim": "_lowest(x.dtype)", "argmax": "_lowest(x.dtype)",
         "amin": "_highest(x.dtype)", "min_dim": "_highest(x.dtype)", "argmin": "_highest(x.dtype)"}


def _lines(code: str, indent: str) -> list[str]:
    return [f"{indent}{line}" for line in code.split("\n")] if code else []


def _loop(update: str, other: str, raw: bool) -> list[str]:
    cast = "" if raw else ".to(ACC)"
    return ["    for start in range(0, n_cols, BLOCK_SIZE):",
            "        cols = start + cols0",
            "        offs = rows[:, None] * n_cols + cols[None, :]",
            "        mask = row_ok[:, None] & (cols < n_cols)[None, :] & (offs < total)",
            f"        x = tl.load(x_ptr + offs, mask=mask, other={other}){cast}"] + _lines(update, "        ")


def kernel_source(name: str, kind: str) -> str:
    k = KINDS[kind]
    lines = _lines(k["init"], "    ") + _loop(k["update"], k["other"], k["raw"])
    if k["update2"]:
        lines += _lines(k["mid"], "    ") + _loop(k["update2"], k["other"], k["raw"])
    lines += _lines(k["final"], "    ")
    if k["outs"] != -1:
        lines += ["    if OUT_BF16:", "        res = _rtne_bf16(res)  # round to nearest even, like ATen",
                  "    tl.store(out_ptr + rows, res.to(out_ptr.dtype.element_ty), mask=row_ok)"]
    if k["outs"] == -1:
        lines.append("    tl.store(out_ptr + rows, res2.to(out_ptr.dtype.element_ty), mask=row_ok)")
    elif k["outs"] == 2:
        if kind == "var_mean":
            lines += ["    if OUT_BF16:", "        res2 = _rtne_bf16(res2)"]
        lines.append("    tl.store(out2_ptr + rows, res2.to(out2_ptr.dtype.element_ty), mask=row_ok)")
    second = "out2_ptr, " if k["outs"] == 2 else ""
    log = ", LOG_BLOCK: tl.constexpr" if "LOG_BLOCK" in k["final"] else ""
    pad = " " * (len(name) + 5)
    body = "\n".join(lines)
    return f'''
@triton.jit
def {name}(x_ptr, out_ptr, {second}n_rows, n_cols, total, divisor, fill, ACC: tl.constexpr,
{pad}DIVIDE: tl.constexpr, OUT_BF16: tl.constexpr, BLOCK_SIZE: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr{log}):
    rows = tl.program_id(0).to(tl.int64) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)
    row_ok = rows < n_rows
    cols0 = tl.arange(0, BLOCK_SIZE)
{body}
'''


def build(op: AtenOp) -> Candidate:
    kind = op.kernel
    widen, outs = KINDS[kind]["widen"], KINDS[kind]["outs"]
    name = op.kernel_name
    full, keepdim = op.opt("full", False), op.opt("keepdim", False)
    fill = _FILL.get(kind, "0")
    launch = ["BLOCK_SIZE=BLOCK_SIZE", "ROWS_PER_PROGRAM=ROWS_PER_PROGRAM", "num_warps=NUM_WARPS",
              "num_stages=NUM_STAGES"]
    if "LOG_BLOCK" in KINDS[kind]["final"]:
        launch.insert(0, "LOG_BLOCK=BLOCK_SIZE.bit_length() - 1")
    if full:
        part_int = "torch.int64" if widen else "x.dtype"
        pass1 = wrap_call(f"        {name}[(triton.cdiv(n_part, ROWS_PER_PROGRAM),)]",
                          ["x", "part", "n_part", "CHUNK_SIZE", "n", "1.0", fill, "ACC=acc", "DIVIDE=False",
                           "OUT_BF16=False", *launch])
        pass2 = wrap_call(f"        {name}[(1,)]", ["part", "res", "1", "n_part", "n_part", "float(n)", fill, "ACC=acc",
                                                   "DIVIDE=True", "OUT_BF16=res.dtype == torch.bfloat16", *launch])
        forward = f"""        n = x.numel()
        acc = _acc_type(x.dtype, {widen})
        res = torch.empty((), dtype={op.opt('otype')}, device=x.device)
        n_part = max(1, triton.cdiv(n, CHUNK_SIZE))
        part_dtype = torch.float32 if x.is_floating_point() else {part_int}
        part = torch.empty((n_part,), dtype=part_dtype, device=x.device)
        # pass 1: one partial per CHUNK_SIZE-long chunk of the flattened input (the last chunk masked)
{pass1}
        # pass 2: all partials as one row
{pass2}
        return res
"""
    else:
        out_shape = "x.shape[:-1] + (1,)" if keepdim else "x.shape[:-1]"
        divisor = f"max(n_cols - {op.opt('correction', 0)}, 0)" if kind in ("var", "std", "var_mean") else "n_cols"
        second, ret = "", "res"
        if outs == 2:
            dtype2 = "torch.int64" if kind in ("max_dim", "min_dim") else "res.dtype"
            second = f"        res2 = torch.empty({out_shape}, dtype={dtype2}, device=x.device)\n"
            ret = "res, res2"
        call = wrap_call(f"        {name}[grid]", ["x", ret, "n_rows", "n_cols", "n_rows * n_cols", f"float({divisor})",
                                                   fill, "ACC=acc", "DIVIDE=True",
                                                   "OUT_BF16=res.dtype == torch.bfloat16", *launch])
        forward = f"""        n_cols = x.shape[-1] if x.dim() else 1
        n_rows = math.prod(x.shape[:-1])
        acc = _acc_type(x.dtype, {widen})
        res = torch.empty({out_shape}, dtype={op.opt('otype')}, device=x.device)
{second}        grid = (max(1, triton.cdiv(n_rows, ROWS_PER_PROGRAM)),)
{call}
        return {ret}
"""
    tunables = [("BLOCK_SIZE", 512, "columns per loop step; any power of two in [16, 8192]"),
                ("ROWS_PER_PROGRAM", 4, "rows per program; any power of two in [1, 64]"),
                ("NUM_WARPS", 4, "any of 1, 2, 4, 8, 16"),
                ("NUM_STAGES", 2, "1..5; software-pipelines the column loop's loads on GPUs")]
    if full:
        tunables.insert(1, ("CHUNK_SIZE", 4096, "elements per first-pass partial; any power of two in [16, 8192]"))
    where = ("every element (the flattened input), in two launches: chunk partials, then their reduction" if full
             else "the last dim")
    acc_ints = "int64" if widen else "the input type"
    explanation = f"""Reduction kind ``{kind}`` over {where}. Each program walks its rows' columns in
BLOCK_SIZE steps, keeping a [ROWS_PER_PROGRAM, BLOCK_SIZE] accumulator (fp32 for floats, {acc_ints} for
integers) and reducing it along the columns once at the end, then stores the result rounded once to ATen's
output dtype. Masked lanes load the reduction's identity, so any power-of-two BLOCK_SIZE / ROWS_PER_PROGRAM is
correct for any shape, empty rows and an empty reduced dim included. Bandwidth-bound: the input is read once
(twice for two-pass kinds, the second time expected to hit L2 for rows up to a few MB)."""
    return Candidate(title=f"Row reduction {op.name}: 2-D [ROWS_PER_PROGRAM, BLOCK_SIZE] accumulator, column loop",
                     tags=["reduction", "row-wise", "memory-bound", "aten"], explanation=explanation,
                     tunables=tunables, kernels=kernel_source(name, kind), forward=forward)
