"""Normalization template: one row (or group) per loop iteration, ROWS_PER_PROGRAM of them per program.

Rows are walked in BLOCK_SIZE column blocks, so any row length works with any power-of-two block: a first
pass gathers the statistic (mean, max, sum of grad * out ...), a second pass the one that depends on it
(variance, sum of exponentials), a last pass writes the output; statistics are fp32 and outputs are rounded
once. The re-reads are expected to hit L2 for rows up to a few MB. Batch norm in eval mode needs no
statistics and is a flat elementwise kernel over [N, C, HW] with per-channel parameters.
"""

from __future__ import annotations

from kernelevolve.aten.lowering import Candidate
from kernelevolve.aten.op import AtenOp

_ROW_CONSTEXPRS = "OUT_BF16: tl.constexpr, BLOCK_SIZE: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr"
_ROW_LOOP = '''
    cols0 = tl.arange(0, BLOCK_SIZE)
    for i in range(ROWS_PER_PROGRAM):
        row = tl.program_id(0) * ROWS_PER_PROGRAM + i
        if row < n_rows:  # the last program may run past the end
            base = row.to(tl.int64) * n_cols
'''


def _pass(lines: str) -> str:
    body = "\n".join(f"                {line}" for line in lines.strip("\n").split("\n"))
    return f'''            for start in range(0, n_cols, BLOCK_SIZE):
                cols = start + cols0
                mask = cols < n_cols
{body}
'''


def _store(expr: str, ptr: str = "y_ptr", offs: str = "base + cols", flag: str = "OUT_BF16") -> str:
    return f"""val = {expr}
if {flag}:
    val = _rtne_bf16(val)
tl.store({ptr} + {offs}, val.to({ptr}.dtype.element_ty), mask=mask)"""


_LOAD_X = "x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)"
_LOAD_G = "g = tl.load(grad_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)"
_LOAD_O = "o = tl.load(out_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)"
_MEAN = "            acc = tl.zeros([BLOCK_SIZE], tl.float32)\n" + _pass(f"{_LOAD_X}\nacc += x") + \
        "            mean = tl.sum(acc, axis=0) / n_cols\n" \
        "            acc = tl.zeros([BLOCK_SIZE], tl.float32)\n" + \
        _pass(f"{_LOAD_X}\nd = tl.where(mask, x - mean, 0.0)\nacc += d * d") + \
        "            rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)\n"
_MAX = "            acc = tl.full([BLOCK_SIZE], float(\"-inf\"), tl.float32)\n" + \
       _pass("x = tl.load(x_ptr + base + cols, mask=mask, other=float(\"-inf\")).to(tl.float32)\n"
             "acc = tl.maximum(acc, x)") + \
       "            row_max = tl.max(acc, axis=0)\n" \
       "            acc = tl.zeros([BLOCK_SIZE], tl.float32)\n" + \
       _pass(f"{_LOAD_X}\nacc += tl.where(mask, tl.exp(x - row_max), 0.0)") + \
       "            total = tl.sum(acc, axis=0)\n"
_W = "w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)"
_B = "b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)"

# CUDA's group norm stores its statistics in the input dtype and builds the output from those rounded values
# (scale = rstd * w, shift = b - scale * mean in fp32): with 16-bit inputs on a GPU the kernel rounds them the
# same way (1 fp16, 2 bf16) or it differs from ATen by a few output ulps. The CPU kernel uses fp32 statistics.
_GN_STAT_ROUND = ("            if STAT_ROUND == 1:\n                mean = mean.to(tl.float16).to(tl.float32)\n"
                  "                rstd = rstd.to(tl.float16).to(tl.float32)\n"
                  "            if STAT_ROUND == 2:\n                mean = _rtne_bf16(mean)\n"
                  "                rstd = _rtne_bf16(rstd)\n")

# kind -> (kernel parameters, body inside the row loop)
KINDS = {
    "layer_norm": ("x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_rows, n_cols, eps, STAT_BF16: tl.constexpr",
                   _MEAN + _pass(f"{_LOAD_X}\n{_W}\n{_B}\n" + _store("(x - mean) * rstd * w + b")) +
                   "            if STAT_BF16:\n                mean = _rtne_bf16(mean)\n"
                   "                rstd = _rtne_bf16(rstd)\n"
                   "            tl.store(mean_ptr + row, mean.to(mean_ptr.dtype.element_ty))\n"
                   "            tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))\n"),
    "rms_norm": ("x_ptr, w_ptr, y_ptr, n_rows, n_cols, eps",
                 "            acc = tl.zeros([BLOCK_SIZE], tl.float32)\n" + _pass(f"{_LOAD_X}\nacc += x * x") +
                 "            rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)\n" +
                 _pass(f"{_LOAD_X}\n{_W}\n" + _store("x * rstd * w"))),
    "softmax": ("x_ptr, y_ptr, n_rows, n_cols", _MAX + _pass(f"{_LOAD_X}\n" + _store(
        "tl.exp(x - row_max) / total"))),
    "log_softmax": ("x_ptr, y_ptr, n_rows, n_cols", _MAX + "            shift = row_max + tl.log(total)\n" + _pass(
        f"{_LOAD_X}\n" + _store("x - shift"))),
    "softmax_backward": ("grad_ptr, out_ptr, y_ptr, n_rows, n_cols",
                         "            acc = tl.zeros([BLOCK_SIZE], tl.float32)\n" +
                         _pass(f"{_LOAD_G}\n{_LOAD_O}\nacc += g * o") + "            dot = tl.sum(acc, axis=0)\n" +
                         _pass(f"{_LOAD_G}\n{_LOAD_O}\n" + _store("o * (g - dot)"))),
    "log_softmax_backward": ("grad_ptr, out_ptr, y_ptr, n_rows, n_cols",
                             "            acc = tl.zeros([BLOCK_SIZE], tl.float32)\n" +
                             _pass(f"{_LOAD_G}\nacc += g") + "            gsum = tl.sum(acc, axis=0)\n" +
                             _pass(f"{_LOAD_G}\n{_LOAD_O}\n" + _store("g - tl.exp(o) * gsum"))),
    # a group is one contiguous row of (C / groups) * HW elements; channel of a column: g * cpg + col // hw
    "group_norm": ("x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_rows, n_cols, groups, cpg, hw, eps, "
                   "STAT_ROUND: tl.constexpr",
                   _MEAN + _GN_STAT_ROUND + _pass(f"{_LOAD_X}\nch = (row % groups) * cpg + cols // hw\n"
                                 "w = tl.load(w_ptr + ch, mask=mask, other=0.0).to(tl.float32)\n"
                                 "b = tl.load(b_ptr + ch, mask=mask, other=0.0).to(tl.float32)\n" +
                                 _store("(x - mean) * rstd * w + b")) +
                   "            if OUT_BF16:\n                mean = _rtne_bf16(mean)\n"
                   "                rstd = _rtne_bf16(rstd)\n"
                   "            tl.store(mean_ptr + row, mean.to(mean_ptr.dtype.element_ty))\n"
                   "            tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))\n"),
}
_FORWARDS = {
    "layer_norm": """        n_cols = x.shape[-1]
        n_rows = math.prod(x.shape[:-1])
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        # ATen keeps the statistics in the input dtype on CPU and in fp32 (its accumulate type) on CUDA
        stat_dtype = x.dtype if x.device.type == "cpu" else torch.float32
        mean = torch.empty(x.shape[:-1] + (1,), dtype=stat_dtype, device=x.device)
        rstd = torch.empty(x.shape[:-1] + (1,), dtype=stat_dtype, device=x.device)
        {launch}x, w, b, y, mean, rstd, n_rows, n_cols, 1e-5, STAT_BF16=stat_dtype == torch.bfloat16, {kw})
        return y, mean, rstd
""",
    "rms_norm": """        n_cols = x.shape[-1]
        n_rows = math.prod(x.shape[:-1])
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        {launch}x, w, y, n_rows, n_cols, 1e-6, {kw})
        return y
""",
    "group_norm": """        n, c = x.shape[0], x.shape[1]
        hw = math.prod(x.shape[2:])
        groups = 4
        n_rows, n_cols = n * groups, (c // groups) * hw
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        mean = torch.empty((n, groups), dtype=x.dtype, device=x.device)
        rstd = torch.empty((n, groups), dtype=x.dtype, device=x.device)
        stat_round = {{torch.float16: 1, torch.bfloat16: 2}}.get(x.dtype, 0) if x.device.type != "cpu" else 0
        {launch}x, w, b, y, mean, rstd, n_rows, n_cols, groups, c // groups, hw, 1e-5, stat_round, {kw})
        return y, mean, rstd
""",
}
_SOFTMAX_FWD = """        n_cols = {src}.shape[-1]
        n_rows = math.prod({src}.shape[:-1])
        y = torch.empty({src}.shape, dtype={src}.dtype, device={src}.device)
        {launch}{args}, y, n_rows, n_cols, {kw})
        return y
"""
_BN = '''
@triton.jit
def {name}({sig}):
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    ch = (offs // hw) % channels
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(rm_ptr + ch, mask=mask, other=0.0).to(tl.float32)
    var = tl.load(rv_ptr + ch, mask=mask, other=1.0).to(tl.float32)
    w = tl.load(w_ptr + ch, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + ch, mask=mask, other=0.0).to(tl.float32)
    val = (x - mean) * tl.rsqrt(var + eps) * w + b
    if OUT_BF16:
        val = _rtne_bf16(val)
    tl.store(y_ptr + offs, val.to(y_ptr.dtype.element_ty), mask=mask)
'''
_BN_SIG = ("x_ptr, w_ptr, b_ptr, rm_ptr, rv_ptr, y_ptr, n_elements, channels, hw, eps, OUT_BF16: tl.constexpr, "
           "BLOCK_SIZE: tl.constexpr")
_BN_FWD = """        hw = math.prod(x.shape[2:])
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n = y.numel()
        {name}[(max(1, triton.cdiv(n, BLOCK_SIZE)),)](
            x, w, b, rm, rv, y, n, max(x.shape[1], 1), max(hw, 1), 1e-5, OUT_BF16=y.dtype == torch.bfloat16,
            BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return y
"""


def build(op: AtenOp) -> Candidate:
    kind = op.kernel
    name = op.kernel_name
    if kind == "batch_norm_eval":
        return Candidate(
            title="Eval-mode batch norm: flat elementwise with per-channel running stats, weight and bias",
            tags=["normalization", "elementwise", "memory-bound", "aten"],
            explanation="""Running statistics make eval-mode batch norm elementwise: each element of
x [N, C, *] finds its channel as (offset // HW) % C, loads that channel's mean, variance, weight and bias
(cached: C values) and stores (x - mean) * rsqrt(var + eps) * w + b in fp32, rounded once. The spec returns
output 0 of the overload (the saved statistics are empty in eval mode). Bandwidth-bound, tail masked.""",
            tunables=[("BLOCK_SIZE", 1024, "elements per program; any power of two in [16, 8192]"),
                      ("NUM_WARPS", 4, "any of 1, 2, 4, 8, 16"), ("NUM_STAGES", 1, "1..5; no loop to pipeline")],
            kernels=_BN.format(name=name, sig=_BN_SIG), forward=_BN_FWD.format(name=name))
    params, body = KINDS[kind]
    kernel = f'''
@triton.jit
def {name}({params}, {_ROW_CONSTEXPRS}):{_ROW_LOOP}{body}'''
    launch = f"{name}[(max(1, triton.cdiv(n_rows, ROWS_PER_PROGRAM)),)](\n            "
    kw = ("OUT_BF16=y.dtype == torch.bfloat16, BLOCK_SIZE=BLOCK_SIZE,\n            "
          "ROWS_PER_PROGRAM=ROWS_PER_PROGRAM, num_warps=NUM_WARPS, num_stages=NUM_STAGES")
    if kind in _FORWARDS:
        forward = _FORWARDS[kind].format(launch=launch, kw=kw)
    else:
        src = "x" if kind in ("softmax", "log_softmax") else "out"
        forward = _SOFTMAX_FWD.format(src=src, launch=launch, kw=kw, args=", ".join(op.arg_names))
    explanation = f"""``{kind}`` over the last dim{' (per group of C/4 channels x HW)' if kind == 'group_norm' else ''}.
Each program handles ROWS_PER_PROGRAM rows; a row is walked in BLOCK_SIZE column blocks, first for its
fp32 statistics, then to write the output rounded once to the input dtype, so any power-of-two BLOCK_SIZE
works for any row length (masked tails, empty inputs launch one idle program). Memory-bound: the passes
re-read the row, expected to hit L2; a single-pass variant keeping the row in registers is the obvious next
step when BLOCK_SIZE >= the row length."""
    tunables = [("BLOCK_SIZE", 2048, "columns per loop step; any power of two in [16, 8192]"),
                ("ROWS_PER_PROGRAM", 1, "rows per program; any power of two in [1, 64]"),
                ("NUM_WARPS", 8, "any of 1, 2, 4, 8, 16"),
                ("NUM_STAGES", 2, "1..5; pipelines the column loops' loads on GPUs")]
    return Candidate(title=f"Looped row-wise {kind.replace('_', ' ')}: fp32 statistics, BLOCK_SIZE column passes",
                     tags=["normalization", "row-wise", "memory-bound", "aten"], explanation=explanation,
                     tunables=tunables, kernels=kernel, forward=forward)
