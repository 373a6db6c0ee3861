"""What lets an exported kernel file run on a CPU-only machine: a preamble that selects Triton's interpreter.

Why: without a GPU driver, Triton fails at the first launch with ``0 active drivers ([]). There should only
be one.``; its CPU interpreter runs the same kernels, but only when ``TRITON_INTERPRET=1`` is set before
triton is first imported. Users of ``ke best`` on a laptop hit that with no hint, so every exported file that
defines kernels sets it itself when torch sees no GPU (an explicit setting is always kept). It asks torch,
not Triton: importing triton to ask would build triton.language's own helpers for a GPU, and the interpreter
then fails on them; for the same reason a process that imported triton already gets one clear error instead.
"""

from __future__ import annotations

import ast

from evaluators.source_tree import parse_source

# one line for the headers (docstrings) of exported files
CPU_NOTE = ("On a CPU-only machine (torch sees no GPU) the kernels run on Triton's CPU interpreter: the "
            "exported code sets TRITON_INTERPRET=1 itself before triton is first imported, unless "
            "TRITON_INTERPRET is already set; a process that imported triton earlier must set it itself. "
            "The interpreter checks results; it is not fast.")

PREAMBLE = '''# --- CPU-only machines (added by `ke best`) --------------------------------------------------------
# Triton runs kernels through a GPU driver (CUDA or ROCm), or on its CPU interpreter when TRITON_INTERPRET=1
# is set before triton is first imported. Where torch sees no GPU and TRITON_INTERPRET is unset, it is set
# here, so this file runs on a CPU-only machine too (slowly). An explicit TRITON_INTERPRET is left as it is.
import os as _ke_os
import sys as _ke_sys

if "TRITON_INTERPRET" not in _ke_os.environ:
    import torch as _ke_torch

    if not (_ke_torch.cuda.is_available() or (hasattr(_ke_torch, "xpu") and _ke_torch.xpu.is_available())):
        if "triton" in _ke_sys.modules:  # too late: its own helpers were already built for a GPU
            raise ImportError("no GPU found: on a CPU-only machine set TRITON_INTERPRET=1 before triton is "
                              "imported (here it was imported before this file)")
        _ke_os.environ["TRITON_INTERPRET"] = "1"
# --------------------------------------------------------------------------------------------------
'''


def with_cpu_fallback(source: str) -> str:
    """``source`` with :data:`PREAMBLE` after its module docstring and ``from __future__`` imports (which
    must stay first), so it runs before the file imports triton or defines a kernel."""
    try:
        body = parse_source(source).body
    except SyntaxError:  # not Python we can place it in: put it first
        return PREAMBLE + source
    end = 0
    for i, stmt in enumerate(body):
        docstring = (i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                     and isinstance(stmt.value.value, str))
        if docstring or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            end = stmt.end_lineno or end
            continue
        break
    lines = source.splitlines(keepends=True)
    head, tail = "".join(lines[:end]), "".join(lines[end:])
    if head and not head.endswith("\n"):
        head += "\n"
    return head + ("\n" if head else "") + PREAMBLE + ("\n" if tail.strip() and tail[0] != "\n" else "") + tail


def without_cpu_fallback(source: str) -> str:
    """An exported file with its exact :data:`PREAMBLE` taken out again: ``ke eval`` of an exported kernel checks
    the kernel, and the evaluator's static checks (rightly) refuse candidate code that reads ``os.environ``.
    Only the verbatim block is removed; anything else that touches the environment is still refused."""
    return source.replace(PREAMBLE, "", 1)

