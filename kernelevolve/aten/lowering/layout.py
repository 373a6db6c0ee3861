"""Layout template: kernels over the output that compute, per element, which input element (or the pad
constant) lands there. No arithmetic on values: triu/tril zero one side of a diagonal, flip/roll/repeat
permute or replicate, cat/stack/constant_pad_nd interleave sources, so outputs match ATen bit for bit
(cat/stack convert a lower-precision source to the promoted dtype exactly).

Ops whose mapping works row by row over the last dim (triu, tril, constant_pad_nd, roll, repeat) use a 2-D
grid of BLOCK_M rows x BLOCK_N columns: the row and column of an element come from the program ids, not
from dividing a flat offset by a runtime row length. A 64-bit division per element is an emulated
instruction sequence on GPUs; on the H200 those flat kernels ran at 0.28-0.53x of torch.compile, which
specialises the division on a static shape. The rest keep the flat kernel.
"""

from __future__ import annotations

from kernelevolve.aten.lowering import Candidate
from kernelevolve.aten.op import AtenOp

# kind -> (extra kernel parameters, body computing ``val``, forward lines before the launch, launch args)
KINDS = {
    "flip": ("a, b, c", "ci = offs % c\nbi = (offs // c) % b\nai = offs // (b * c)\n"
             "val = tl.load(x_ptr + ((a - 1 - ai) * b + bi) * c + (c - 1 - ci), mask=mask)  # dims 0 and -1",
             "res = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
             "a, c = max(x.shape[0], 1), max(x.shape[-1], 1)",
             "a, max(x.numel() // (a * c), 1), c"),
    "cat": ("n1, n2", "n = n1 + n2\nrow = offs // n\ncol = offs % n\nin_x = col < n1\n"
            "vx = tl.load(x_ptr + row * n1 + col, mask=mask & in_x, other=0).to(res_ptr.dtype.element_ty)\n"
            "vy = tl.load(y_ptr + row * n2 + (col - n1), mask=mask & (col >= n1), other=0)"
            ".to(res_ptr.dtype.element_ty)\nval = tl.where(in_x, vx, vy)",
            "res = torch.empty(x.shape[:-1] + (x.shape[-1] + y.shape[-1],), dtype=torch.result_type(x, y),\n"
            "                  device=x.device)\n"
            "n1, n2 = x.shape[-1], y.shape[-1]\n"
            "if n1 + n2 == 0:\n    n2 = 1  # keeps offs % n defined; nothing is stored",
            "n1, n2"),
    "stack": ("", "i = offs // 2\nfirst = (offs % 2) == 0\n"
              "vx = tl.load(x_ptr + i, mask=mask & first, other=0).to(res_ptr.dtype.element_ty)\n"
              "vy = tl.load(y_ptr + i, mask=mask & (offs % 2 == 1), other=0).to(res_ptr.dtype.element_ty)\n"
              "val = tl.where(first, vx, vy)",
              "res = torch.empty(x.shape + (2,), dtype=torch.result_type(x, y), device=x.device)", ""),
}


# kind -> (extra kernel parameters, body computing ``val`` from ``r`` (int64 rows) and ``cols`` (int32),
#          forward lines defining res, n_rows, n_cols (output row length) and the extra launch args)
ROW_KINDS = {
    "triu": ("m, n", "i = r % m  # row within its matrix: BLOCK_M divisions, not one per element\n"
             "keep = (cols[None, :] - i[:, None]) >= 1  # triu(x, diagonal=1)\n"
             "val = tl.load(x_ptr + r[:, None] * n + cols[None, :], mask=mask & keep, other=0)",
             "res = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
             "n_rows, n_cols = math.prod(x.shape[:-1]), x.shape[-1]", "max(x.shape[-2], 1), x.shape[-1]"),
    "tril": ("m, n", "i = r % m\n"
             "keep = (cols[None, :] - i[:, None]) <= -1  # tril(x, diagonal=-1)\n"
             "val = tl.load(x_ptr + r[:, None] * n + cols[None, :], mask=mask & keep, other=0)",
             "res = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
             "n_rows, n_cols = math.prod(x.shape[:-1]), x.shape[-1]", "max(x.shape[-2], 1), x.shape[-1]"),
    "pad": ("n", "src = cols[None, :] - 2  # 2 before, 3 after\n"
            "inside = (src >= 0) & (src < n)\n"
            "val = tl.load(x_ptr + r[:, None] * n + src, mask=mask & inside, other=0)\n"
            "val = tl.where(inside, val, 1)  # the pad value, converted to x's dtype by tl.where",
            "res = torch.empty(x.shape[:-1] + (x.shape[-1] + 5,), dtype=x.dtype, device=x.device)\n"
            "n_rows, n_cols = math.prod(x.shape[:-1]), x.shape[-1] + 5", "x.shape[-1]"),
    "roll": ("n, shift", "src = cols[None, :] - shift\nsrc = tl.where(src < 0, src + n, src)\n"
             "val = tl.load(x_ptr + r[:, None] * n + src, mask=mask)",
             "res = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
             "n_rows, n_cols = math.prod(x.shape[:-1]), x.shape[-1]", "max(x.shape[-1], 1), 3 % max(x.shape[-1], 1)"),
    "repeat": ("m, n", "src = cols[None, :] % n  # int32, and only within a row\n"
               "val = tl.load(x_ptr + (r % m)[:, None] * n + src, mask=mask)  # repeats (2, 3)",
               "m, n = (x.shape[0], x.shape[1]) if x.dim() == 2 else (1, x.shape[0])\n"
               "res = torch.empty((2 * m, 3 * n) if x.dim() == 2 else (2, 3 * n), dtype=x.dtype, device=x.device)\n"
               "n_rows, n_cols = res.shape[0], 3 * n", "max(m, 1), max(n, 1)"),
}


def _build_rows(op: AtenOp) -> Candidate:
    kind, name = op.kernel, op.kernel_name
    params, body, prelude, launch_args = ROW_KINDS[kind]
    ptrs = ", ".join(f"{a}_ptr" for a in op.arg_names)
    body_lines = "\n".join(f"    {line}" for line in body.split("\n"))
    kernel = f'''
@triton.jit
def {name}({ptrs}, res_ptr, n_rows, n_cols, {params}, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (r < n_rows)[:, None] & (cols < n_cols)[None, :]
{body_lines}
    tl.store(res_ptr + r[:, None] * n_cols + cols[None, :], val, mask=mask)
'''
    pre = "\n".join(f"        {line}" for line in prelude.split("\n"))
    forward = f"""{pre}
        grid = (max(1, triton.cdiv(n_rows, BLOCK_M)), max(1, triton.cdiv(n_cols, BLOCK_N)))
        {name}[grid](
            {", ".join(op.arg_names)}, res, n_rows, n_cols, {launch_args}, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return res
"""
    explanation = f"""Kind ``{kind}``: a 2-D grid over the output viewed as rows x last dim; each program
copies a BLOCK_M x BLOCK_N tile, finding each element's source from its row and column (no per-element
division by a runtime row length, which GPUs emulate for 64-bit integers), or the constant where nothing is
copied. Values are not converted, so outputs are bit-exact. Bandwidth-bound; a tile's loads are contiguous
along the row except at a roll's wrap point. Rows and columns are masked, so any power-of-two BLOCK_M and
BLOCK_N are correct for any shape, empty ones included (one idle program)."""
    return Candidate(title=f"Layout op {op.name}: row-tiled output-indexed copy, BLOCK_M x BLOCK_N per program",
                     tags=["layout", "copy", "memory-bound", "aten"], explanation=explanation,
                     tunables=[("BLOCK_M", 4, "rows per program; any power of two in [1, 64]"),
                               ("BLOCK_N", 512, "columns per program; any power of two in [16, 4096]"),
                               ("NUM_WARPS", 4, "any of 1, 2, 4, 8, 16"),
                               ("NUM_STAGES", 1, "1..5; no loop to pipeline")],
                     kernels=kernel, forward=forward)


def build(op: AtenOp) -> Candidate:
    kind = op.kernel
    if kind in ROW_KINDS:
        return _build_rows(op)
    name = op.kernel_name
    params, body, prelude, launch_args = KINDS[kind]
    ptrs = ", ".join(f"{a}_ptr" for a in op.arg_names)
    extra = f"{params}, " if params else ""
    body_lines = "\n".join(f"    {line}" for line in body.split("\n"))
    kernel = f'''
@triton.jit
def {name}({ptrs}, res_ptr, n_out, {extra}BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_out
{body_lines}
    tl.store(res_ptr + offs, val, mask=mask)
'''
    pre = "\n".join(f"        {line}" for line in prelude.split("\n"))
    args = ", ".join(op.arg_names)
    extra_args = f"{launch_args}, " if launch_args else ""
    forward = f"""{pre}
        n_out = res.numel()
        {name}[(max(1, triton.cdiv(n_out, BLOCK_SIZE)),)](
            {args}, res, n_out, {extra_args}BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return res
"""
    explanation = f"""Kind ``{kind}``: one program per BLOCK_SIZE chunk of the flattened output computes, per
element, the input offset it copies (integer index arithmetic only) and loads it, or the constant where
nothing is copied. Values are not converted except to the promoted dtype of a concatenation, so outputs are
bit-exact. Bandwidth-bound; reads are contiguous except across a flip or a roll's wrap point. The tail is
masked, so any power-of-two BLOCK_SIZE is correct for any shape, empty ones included."""
    return Candidate(title=f"Layout op {op.name}: flat output-indexed copy, one masked chunk per program",
                     tags=["layout", "copy", "memory-bound", "aten"], explanation=explanation,
                     tunables=[("BLOCK_SIZE", 1024, "elements per program; any power of two in [16, 8192]"),
                               ("NUM_WARPS", 4, "any of 1, 2, 4, 8, 16"),
                               ("NUM_STAGES", 1, "1..5; no loop to pipeline")],
                     kernels=kernel, forward=forward)
