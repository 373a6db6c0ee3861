"""Layout template: a flat kernel over the output that computes, per element, which input element (or the
pad constant) lands there. No arithmetic on values: triu/tril zero one side of a diagonal, flip/roll/repeat
permute or replicate, cat/stack/constant_pad_nd interleave sources, so outputs match ATen bit for bit
(cat/stack convert a lower-precision source to the promoted dtype exactly).
"""

from __future__ import annotations

from kernelevolve.aten.lowering import Candidate
from kernelevolve.aten.op import AtenOp

# kind -> (extra kernel parameters, body computing ``val``, forward lines before the launch, launch args)
KINDS = {
    "triu": ("m, n", "col = offs % n\nrow = (offs // n) % m\n"
             "val = tl.load(x_ptr + offs, mask=mask & (col - row >= 1), other=0)  # triu(x, diagonal=1)",
             "res = torch.empty(x.shape, dtype=x.dtype, device=x.device)",
             "max(x.shape[-2], 1), max(x.shape[-1], 1)"),
    "tril": ("m, n", "col = offs % n\nrow = (offs // n) % m\n"
             "val = tl.load(x_ptr + offs, mask=mask & (col - row <= -1), other=0)  # tril(x, diagonal=-1)",
             "res = torch.empty(x.shape, dtype=x.dtype, device=x.device)",
             "max(x.shape[-2], 1), max(x.shape[-1], 1)"),
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
    "pad": ("n", "no = n + 5\nrow = offs // no\ncol = offs % no - 2  # 2 before, 3 after\n"
            "inside = (col >= 0) & (col < n)\n"
            "val = tl.load(x_ptr + row * n + col, mask=mask & inside, other=0)\n"
            "val = tl.where(inside, val, 1)  # the pad value, converted to x's dtype by tl.where",
            "res = torch.empty(x.shape[:-1] + (x.shape[-1] + 5,), dtype=x.dtype, device=x.device)",
            "x.shape[-1]"),
    "roll": ("n, shift", "row = offs // n\ncol = offs % n - shift\ncol = tl.where(col < 0, col + n, col)\n"
             "val = tl.load(x_ptr + row * n + col, mask=mask)",
             "res = torch.empty(x.shape, dtype=x.dtype, device=x.device)\nn = max(x.shape[-1], 1)",
             "n, 3 % n"),
    "repeat": ("m, n", "oc = offs % (3 * n)\norow = offs // (3 * n)\n"
               "val = tl.load(x_ptr + (orow % m) * n + oc % n, mask=mask)  # repeats (2, 3)",
               "m, n = (x.shape[0], x.shape[1]) if x.dim() == 2 else (1, x.shape[0])\n"
               "res = torch.empty((2 * m, 3 * n) if x.dim() == 2 else (2, 3 * n), dtype=x.dtype, device=x.device)\n"
               "m, n = max(m, 1), max(n, 1)",
               "m, n"),
}


def build(op: AtenOp) -> Candidate:
    kind = op.kernel
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
