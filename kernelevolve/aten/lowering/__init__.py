"""Offline template lowering: ``lower(op)`` -> the full text of a Triton candidate for a suite op.

Each template family has a module that returns the candidate's pieces (docstring parts, tunables, kernels,
forward); this module assembles them into one file that follows the code-sample contract: YAML front matter
in the module docstring, module-level tunables the offline search halves and doubles (every kernel masks
every dimension, so all reachable values stay correct), ``@triton.jit`` kernels and ``class TritonModel``
whose forward only allocates outputs, takes views and launches kernels (always at least one program, so an
empty input still launches).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from kernelevolve.aten.lowering.mathlib import helpers_for
from kernelevolve.aten.op import AtenOp

# Host-side helpers a candidate may need (plain Python on dtypes: no tensor compute).
HOST_HELPERS = {
    "_TL": "_TL = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,\n"
           "       torch.float64: tl.float64, torch.int8: tl.int8, torch.uint8: tl.uint8, torch.int16: tl.int16,\n"
           "       torch.int32: tl.int32, torch.int64: tl.int64, torch.bool: tl.int1}",
    "_compute_type": "def _compute_type(dtype):\n"
                     "    \"\"\"Triton type the kernel computes in: fp32 for floating dtypes but fp64.\"\"\"\n"
                     "    return tl.float32 if dtype.is_floating_point and dtype != torch.float64 else _TL[dtype]",
    "_acc_type": "def _acc_type(dtype, widen):\n"
                 "    \"\"\"Accumulator: fp32 for floats; int64 for integer sums (widen), else the input type.\"\"\"\n"
                 "    if dtype.is_floating_point:\n"
                 "        return tl.float32\n"
                 "    return tl.int64 if widen else _TL[dtype]",
    "_float_type": "def _float_type(dtype):\n"
                   "    \"\"\"ATen's true division promotes integers to the default float dtype.\"\"\"\n"
                   "    return dtype if dtype.is_floating_point else torch.get_default_dtype()",
    "_sum_type": "def _sum_type(dtype):\n"
                 "    \"\"\"ATen sums, products and cumsums of integers and bools produce int64.\"\"\"\n"
                 "    return dtype if dtype.is_floating_point else torch.int64",
    "_promote": "def _promote(dtype, t):\n"
                "    \"\"\"ATen's promotion of ``dtype`` (a tensor's) with tensor ``t``: result_type on an empty\n"
                "    tensor, as torch.promote_types dispatches an op that the dynamic guard rejects.\"\"\"\n"
                "    return torch.result_type(torch.empty(0, dtype=dtype, device=t.device), t)",
    "_mode": "def _mode(t, n, n_cols):\n"
             "    \"\"\"How an argument maps onto the output: 0 same shape, 1 last-dim row, 2 one element.\"\"\"\n"
             "    return 0 if t.numel() == n else (2 if t.numel() == 1 else 1)",
    "_lowest": "def _lowest(dtype):\n"
               "    return float(\"-inf\") if dtype.is_floating_point else torch.iinfo(dtype).min",
    "_highest": "def _highest(dtype):\n"
                "    return float(\"inf\") if dtype.is_floating_point else torch.iinfo(dtype).max",
}
_HOST_DEPS = {"_compute_type": ["_TL"], "_acc_type": ["_TL"]}


@dataclass
class Candidate:
    """The parts of one lowered candidate."""

    title: str
    tags: list[str]
    explanation: str
    tunables: list[tuple[str, int, str]]  # (name, default, comment)
    kernels: str  # the family's @triton.jit kernels
    forward: str  # the body of TritonModel.forward (already indented by 8 spaces)
    extra_host: list[str] = field(default_factory=list)


def _host_helpers(text: str) -> str:
    wanted: list[str] = []

    def visit(name: str) -> None:
        if name in wanted:
            return
        for dep in _HOST_DEPS.get(name, []):
            visit(dep)
        wanted.append(name)

    for name in HOST_HELPERS:
        if re.search(rf"\b{name}\b", text):
            visit(name)
    return "\n\n\n".join(HOST_HELPERS[n] for n in wanted)


def _wrap(text: str, width: int = 110) -> str:
    """Re-flow each blank-line-separated paragraph to ``width`` columns."""
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n")]
    return "\n\n".join(textwrap.fill(p, width, break_long_words=False, break_on_hyphens=False) for p in paragraphs)


def _split_top_level(text: str, depth0: int) -> list[str]:
    """Split ``text`` after each ", " at bracket depth ``depth0`` (nested calls stay on one piece)."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == depth0 and text[i + 1:i + 2] == " ":
            pieces.append(text[start:i + 1])
            start = i + 2
    pieces.append(text[start:])
    return pieces


def _wrap_code(source: str, width: int = 112) -> str:
    """Re-break over-long code lines (kernel signatures, launch arguments) at top-level commas."""
    out = []
    for line in source.split("\n"):
        if len(line) <= width or "#" in line or '"' in line or "'" in line:
            out.append(line)
            continue
        is_def = line.lstrip().startswith("def ")
        indent = " " * (line.index("(") + 1) if is_def else " " * (len(line) - len(line.lstrip()))
        current = ""
        for piece in _split_top_level(line, 1 if is_def else 0):
            candidate = f"{current} {piece}" if current else piece
            if current and len(candidate) > width:
                out.append(current)
                current = indent + piece
            else:
                current = candidate
        out.append(current)
    return "\n".join(out)


def wrap_call(head: str, args: list[str], indent: str = "            ", width: int = 112) -> str:
    """``head(`` then ``args`` packed onto continuation lines of at most ``width`` columns, then ``)``."""
    lines, current = [], indent
    for arg in args:
        piece = f"{arg}, "
        if current.strip() and len(current) + len(piece.rstrip()) > width:
            lines.append(current.rstrip())
            current = indent
        current += piece
    lines.append(current.rstrip().rstrip(",") + ")")
    return head + "(\n" + "\n".join(lines)


def assemble(op: AtenOp, cand: Candidate) -> str:
    tunables = "\n".join(f"{name} = {value}  # {comment}" for name, value, comment in cand.tunables)
    helpers = helpers_for(cand.kernels)
    host = _host_helpers(cand.forward + "\n".join(cand.extra_host))
    sections = [s.strip("\n") for s in (host, *cand.extra_host, helpers, cand.kernels) if s.strip()]
    body = "\n\n\n".join(sections)
    args = ", ".join(op.arg_names)
    origin = (f"Lowered offline from ``{op.call}`` by kernelevolve.aten.lowering ({op.family} template); the "
              f"module-level tunables are the offline search's knobs.")
    return _wrap_code(f'''"""
---
op: {op.name}
title: {cand.title}
hardware: [any]
tags: [{", ".join(cand.tags)}]
---
{_wrap(cand.explanation)}

{_wrap(origin)}
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

{tunables}


{body}


class TritonModel(nn.Module):
    def forward(self, {args}):
{cand.forward.rstrip()}
''')


def lower(op: AtenOp) -> str:
    """The full text of a Triton candidate (``class TritonModel``) implementing ``op``."""
    from kernelevolve.aten.lowering import elementwise, gather, layout, norm, reduction, scan

    builders = {"elementwise": elementwise.build, "reduction": reduction.build, "scan": scan.build,
                "gather": gather.build, "norm": norm.build, "layout": layout.build}
    source = assemble(op, builders[op.family](op))
    if "math." not in source.split("import triton.language as tl", 1)[1]:
        source = source.replace("import math\n\n", "", 1)
    return source
