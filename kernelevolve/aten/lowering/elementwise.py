"""Elementwise template: one program per BLOCK_SIZE chunk of the flattened output.

Every argument is loaded once per element (a later argument may be a last-dim row broadcast, read through
``offs % n_cols``, or a single element), converted to the compute type (fp32 for floating inputs, the
promoted integer type otherwise; ``raw`` arguments keep their own type), combined by the row's body and
stored rounded once to the output dtype. The output's dtype comes from ATen's promotion rules evaluated on
the host from dtypes only.
"""

from __future__ import annotations

import re

from kernelevolve.aten.lowering import Candidate, wrap_call
from kernelevolve.aten.op import AtenOp

NAN = "propagate_nan=tl.PropagateNan.ALL"
def default_ctype(names: list[str]) -> str:
    """ATen's promotion of the value arguments, as a host expression."""
    if len(names) == 1:
        return f"{names[0]}.dtype"
    expr = f"torch.result_type({names[0]}, {names[1]})"
    for name in names[2:]:
        expr = f"_promote({expr}, {name})"
    return expr


def uses(code: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){name}\b", code) is not None


def build(op: AtenOp) -> Candidate:
    names = list(op.arg_names)
    body = op.kernel.replace("NAN", NAN).split("\n")
    raw = set((op.opt("raw") or "").split())
    used = [n for n in names if uses(op.kernel, n)]
    values = [n for n in names if n not in raw] or names[:1]
    ctype = op.opt("ctype") or default_ctype(values)
    otype = op.opt("otype") or "ct"
    first = names[0]
    modes = [n for n in used if n != first]
    params = ", ".join([f"{n}_ptr" for n in names] + ["res_ptr", "n_elements", "n_cols"]
                       + [f"{n.upper()}_MODE: tl.constexpr" for n in modes]
                       + ["CT: tl.constexpr", "IS_FP: tl.constexpr", "OUT_BF16: tl.constexpr"]
                       + (["OUT_FP16: tl.constexpr"] if "OUT_FP16" in op.kernel else []) + ["BLOCK_SIZE: tl.constexpr"])
    loads = []
    for n in used:
        cast = "" if n in raw else ".to(CT)"
        if n == first:
            loads.append(f"    {n} = tl.load({n}_ptr + offs, mask=in_bounds, other=1){cast}")
            continue
        mode = f"{n.upper()}_MODE"
        loads += [f"    {n}_offs = offs  # {mode} 0: same shape as the output",
                  f"    if {mode} == 1:  # a row broadcast along the last dim",
                  f"        {n}_offs = offs % n_cols",
                  f"    elif {mode} == 2:  # a single element",
                  f"        {n}_offs = offs * 0",
                  f"    {n} = tl.load({n}_ptr + {n}_offs, mask=in_bounds, other=1){cast}"]
    temps = [f"    {line}" for line in body[:-1]]
    kernel = f'''
@triton.jit
def {op.kernel_name}({params}):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = offs < n_elements
{chr(10).join(loads + temps)}
    res = {body[-1]}
    if OUT_BF16:
        res = _rtne_bf16(res)  # round to nearest even, as ATen does (the interpreter's cast truncates)
    tl.store(res_ptr + offs, res.to(res_ptr.dtype.element_ty), mask=in_bounds)
'''
    launch_args = ([*names, "res", "n", "n_cols"] + [f"{n.upper()}_MODE=_mode({n}, n, n_cols)" for n in modes]
                   + ["CT=_compute_type(ct)", "IS_FP=ct.is_floating_point", "OUT_BF16=out_dtype == torch.bfloat16"]
                   + (["OUT_FP16=out_dtype == torch.float16"] if "OUT_FP16" in op.kernel else [])
                   + ["BLOCK_SIZE=BLOCK_SIZE", "num_warps=NUM_WARPS", "num_stages=NUM_STAGES"])
    launch = wrap_call(f"        {op.kernel_name}[grid]", launch_args)
    forward = f'''        ct = {ctype}
        out_dtype = {otype}
        res = torch.empty({first}.shape, dtype=out_dtype, device={first}.device)
        n = res.numel()
        n_cols = max(res.shape[-1], 1) if res.dim() else 1
        grid = (max(1, triton.cdiv(n, BLOCK_SIZE)),)  # at least one program, even for an empty output
{launch}
        return res
'''
    formula = "; ".join(body[:-1] + [f"res = {body[-1]}"]).replace(NAN, "NaN-propagating")
    explanation = f"""One program per BLOCK_SIZE chunk of the flattened output computes
``{formula}`` with each argument loaded once{' (a row-broadcast argument through offs % n_cols)' if modes else ''},
converted to the compute type (fp32 for floating inputs, so fp16/bf16 round once, like ATen; integers
exactly) and stored in ATen's output dtype (bf16 rounded to nearest even explicitly). Bandwidth-bound:
BLOCK_SIZE trades per-program work against the number of programs, NUM_WARPS the parallelism inside one;
the tail is masked, so any power-of-two BLOCK_SIZE is correct for any size, an empty one included."""
    tags = ["elementwise", "memory-bound", "aten", op.category.replace("_", "-")]
    return Candidate(
        title=f"Flat elementwise {op.name}: fp32 compute, one masked BLOCK_SIZE chunk per program",
        tags=tags, explanation=explanation,
        tunables=[("BLOCK_SIZE", 1024, "elements per program; any power of two in [16, 8192]"),
                  ("NUM_WARPS", 4, "any of 1, 2, 4, 8, 16"),
                  ("NUM_STAGES", 1, "1..5; no loop to pipeline, kept for a uniform launch")],
        kernels=kernel, forward=forward)
