"""Writing one lowered candidate: front matter, tunables, helpers, kernels and ``class TritonModel``."""

from __future__ import annotations

import textwrap
from collections import Counter

from kernelevolve.lowering import runtime
from kernelevolve.lowering.context import Context
from kernelevolve.lowering.dedupe import dedupe_kernels
from kernelevolve.lowering.mathlib import helpers_for
from kernelevolve.lowering.source_text import wrap_code


def _state_table(ctx: Context) -> str:
    """``_STATE``: the reference's parameter and buffer shapes under each known constructor-args tuple."""
    if not ctx.traced.state:
        return ""
    rows = []
    for key, shapes in ctx.traced.state_shapes.items():
        entries = "".join(f"        {name!r}: ({shape!r}, {dtype}, {param}),\n"
                          for name, (shape, dtype, param) in shapes.items())
        rows.append(f"    {key!r}: {{\n{entries}    }},")
    return ("# parameter/buffer name -> (shape, dtype, is parameter) for each constructor-args tuple the spec uses\n"
            f"_STATE = {{\n{chr(10).join(rows)}\n}}\n_TRACED_ARGS = {ctx.traced.init_key!r}")


def _init_lines(ctx: Context) -> list[str]:
    lines = []
    if ctx.traced.state:
        lines += ["for name, (shape, dtype, parameter) in _STATE.get(repr(args), _STATE[_TRACED_ARGS]).items():",
                  "    _register(self, name, shape, dtype, parameter)"]
    for name, value in ctx.traced.constants.items():
        if value.numel() > 4096:
            from kernelevolve.lowering.errors import LoweringError

            raise LoweringError(f"a tensor constant of {value.numel()} elements is too large to embed")
        data = value.detach().cpu().flatten().tolist()
        lines.append(f"self.register_buffer({('const_' + name)!r}, torch.tensor({data!r}, dtype={value.dtype})"
                     f".reshape({tuple(value.shape)!r}))")
    return lines


def pin_guard(ctx: Context) -> list[str]:
    """A first forward line refusing inputs or state whose sizes differ where the trace fixed them."""
    import torch

    names = dict(zip(ctx.traced.user_inputs, ctx.traced.arg_names or ctx.traced.user_inputs, strict=True))
    checks = []
    for node in ctx.traced.graph.nodes:
        fake = node.meta.get("val") if node.op == "placeholder" else None
        if not isinstance(fake, torch.Tensor) or not node.users:
            continue
        dims = tuple((d, int(size)) for d, size in enumerate(fake.shape)
                     if not isinstance(size, torch.SymInt) or size.node.expr.is_number)
        if not dims:
            continue
        if node.name in names:
            checks.append(f"({names[node.name]}, {names[node.name]!r}, {dims!r})")
        elif node.name in ctx.traced.state:
            kind, target = ctx.traced.state[node.name]
            getter = "get_parameter" if kind == "parameter" else "get_buffer"
            checks.append(f"(self.{getter}({target!r}), {target!r}, {dims!r})")
    return [f"_pinned_sizes([{', '.join(checks)}])"] if checks else []


def family_summary(kernels: list[str]) -> str:
    """``3 pointwise, 1 reduce``: how many kernels of each template family (their names' stems)."""
    families = Counter(k.split("(", 1)[0].split("def ", 1)[1].lstrip("_").rstrip("0123456789") for k in kernels)
    return ", ".join(f"{n} {family}" for family, n in families.items())


def _count(ctx: Context, launches: int) -> str:
    kernels = f"{len(ctx.kernels)} kernel" + ("s" if len(ctx.kernels) != 1 else "")
    return kernels if launches == len(ctx.kernels) else f"{kernels} for {launches} launch sites"


def assemble(ctx: Context, op: str, summary: str) -> str:
    launches = dedupe_kernels(ctx)
    forward_args = ", ".join(["self", *(ctx.traced.arg_names or ctx.traced.user_inputs)])
    forward = "\n".join(f"        {line}" if line else "" for line in [*pin_guard(ctx), *ctx.forward])
    return module_text(ctx, op, summary, launches, f"    def forward({forward_args}):\n{forward}")


def module_text(ctx: Context, op: str, summary: str, launches: int, methods: str, host: str = "") -> str:
    """The candidate's file: ``methods`` (forward and whatever it calls) follow ``__init__`` in the class;
    ``host``: more host code before the kernels (variants.py's dispatch table)."""
    init = _init_lines(ctx)
    init_body = "\n".join(f"        {line}" for line in ["super().__init__()", *init])
    kernels = "\n\n\n".join(k.strip("\n") for k in ctx.kernels)
    host_text = methods + init_body + kernels
    used = runtime.helpers_used(host_text)
    if "_copy_kernel" in used:
        ctx.tunables.append(("COPY_BLOCK", 1024, "elements per program of the strided copy"))
    helper_text = "\n\n\n".join(runtime.HELPERS[h].strip("\n") for h in used)
    device_helpers = helpers_for(kernels + helper_text)
    tunables = "\n".join(f"{name} = {value}  # {comment}" for name, value, comment in ctx.tunables)
    sections = [s for s in (_state_table(ctx), host, helper_text, device_helpers.strip("\n"), kernels) if s.strip()]
    body = "\n\n\n".join(sections)
    explanation = textwrap.fill(
        f"Lowered offline from the PyTorch reference by kernelevolve.lowering: the reference was traced with "
        f"torch.export into core ATen ops and each op lowered by its template family ({summary}). Sizes are "
        "symbolic: kernels take sizes and strides at launch and forward computes every shape from the inputs, "
        "so one candidate serves every case. The module-level tunables are the offline search's knobs; every "
        "kernel masks every dimension, so any power-of-two value stays correct.", 110, break_long_words=False)
    source = f'''"""
---
op: {op}
title: Template lowering of {op} ({_count(ctx, launches)})
hardware: [any]
tags: [lowering, generated]
---
{explanation}
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

{tunables}


{body}


class TritonModel(nn.Module):
    def __init__(self, *args, **kwargs):
{init_body}

{methods}
'''
    if "math." not in source.split("import triton.language as tl", 1)[1]:
        source = source.replace("import math\n\n", "", 1)
    return wrap_code(source)
