"""Structural variants: small rewrites of a kernel's code, not of its tunable numbers.

Each rewrite keeps the kernel's meaning (up to floating-point rounding the spec's tolerances absorb) while
changing what the compiler emits: cache hints on loads and stores, ``exp`` through ``exp2`` (one MUFU op on
NVIDIA instead of a multiply plus one), ``1 / sqrt`` as ``rsqrt``. They are the offline operator's moves once
numeric tuning is exhausted, and they give the search code-level diversity without an LLM. Rewrites are
applied at the exact source spans ``ast`` reports, so comments and formatting survive.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from evaluators.source_tree import parse_source

LOG2E = "1.4426950408889634"
EVICTION = ("evict_first", "evict_last")
# streaming (.cs) for outputs nobody re-reads soon; write-back (.wb) is the default behaviour
STORE_MODIFIERS = (".cs", ".wb")


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (as (line, col) pairs, 1-based lines) with ``text``."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass(frozen=True)
class Variant:
    description: str
    edits: tuple[Edit, ...]


def structural_variants(source: str) -> list[Variant]:
    """Every single structural rewrite that applies to ``source``, in source order."""
    try:
        tree = parse_source(source)
    except SyntaxError:
        return []
    found: list[Variant] = []
    for fn in _jit_functions(tree):
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                found.extend(_call_variants(node, source))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                variant = _rsqrt_variant(node, source)
                if variant is not None:
                    found.append(variant)
    return found


def apply(source: str, variant: Variant) -> str:
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    # right to left, so earlier offsets stay valid
    for edit in sorted(variant.edits, key=lambda e: e.start, reverse=True):
        lo = offsets[edit.start[0] - 1] + edit.start[1]
        hi = offsets[edit.end[0] - 1] + edit.end[1]
        data = data[:lo] + edit.text.encode("utf-8") + data[hi:]
    return data.decode("utf-8")


def _jit_functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            yield node


def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "jit" or (
        isinstance(target, ast.Name) and target.id == "jit")


def _tl_call(node: ast.Call, name: str) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Name)
            and func.value.id == "tl")


def _segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ""


def _call_variants(node: ast.Call, source: str) -> list[Variant]:
    where = f"line {node.lineno}"
    if _tl_call(node, "load"):
        return _keyword_variants(node, source, "eviction_policy", EVICTION, f"tl.load at {where}")
    if _tl_call(node, "store"):
        return _keyword_variants(node, source, "cache_modifier", STORE_MODIFIERS, f"tl.store at {where}")
    if _tl_call(node, "exp") and len(node.args) == 1 and not node.keywords:
        arg = node.args[0]
        func = node.func
        assert isinstance(func, ast.Attribute)
        text = f"({_segment(source, arg)}) * {LOG2E}"
        edits = (Edit(_start(arg), _end(arg), text),
                 Edit(_start(func), _end(func), "tl.exp2"))
        return [Variant(f"tl.exp as tl.exp2 at {where}", edits)]
    return []


def _keyword_variants(node: ast.Call, source: str, key: str, values: tuple[str, ...],
                      what: str) -> list[Variant]:
    """Add the hint when absent; change it to each other value, or drop it, when present."""
    existing = next((kw for kw in node.keywords if kw.arg == key), None)
    if existing is None:
        close = (node.end_lineno or node.lineno, (node.end_col_offset or 1) - 1)  # the closing parenthesis
        body = _segment(source, node)  # a trailing comma before ")" needs no second one
        sep = " " if body[:-1].rstrip().endswith(",") else ", "
        return [Variant(f"{what}: {key}={value!r}", (Edit(close, close, f'{sep}{key}="{value}"'),))
                for value in values]
    current = existing.value.value if isinstance(existing.value, ast.Constant) else None
    out = [Variant(f"{what}: {key}={value!r}", (Edit(_start(existing.value), _end(existing.value), f'"{value}"'),))
           for value in values if value != current]
    # dropping the hint: remove ", key=value" (the preceding comma too)
    out.append(Variant(f"{what}: no {key}", (_drop_keyword(existing, node),)))
    return out


def _drop_keyword(kw: ast.keyword, call: ast.Call) -> Edit:
    others = [a for a in [*call.args, *call.keywords] if a is not kw]
    before = [a for a in others if _start(a) < _start(kw)]
    if before:  # from the end of the previous argument to the end of this keyword
        return Edit(_end(before[-1]), _end(kw.value), "")
    after = [a for a in others if _start(a) > _start(kw)]
    return Edit(_start(kw), _start(after[0]) if after else _end(kw.value), "")


def _rsqrt_variant(node: ast.BinOp, source: str) -> Variant | None:
    """``1.0 / tl.sqrt(e)`` (or ``1 /``) as ``tl.rsqrt(e)``."""
    left, right = node.left, node.right
    if not (isinstance(left, ast.Constant) and left.value in (1, 1.0)):
        return None
    if not (isinstance(right, ast.Call) and _tl_call(right, "sqrt") and len(right.args) == 1):
        return None
    text = f"tl.rsqrt({_segment(source, right.args[0])})"
    return Variant(f"1 / tl.sqrt as tl.rsqrt at line {node.lineno}", (Edit(_start(node), _end(node), text),))


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
