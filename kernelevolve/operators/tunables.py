"""Finding and rewriting a kernel's tunable integers in its source text.

Tunables are module-level UPPER_CASE integer constants with a tunable-looking name (``BLOCK_SIZE = 1024``)
and integer literals passed as launch keywords (``num_warps=4``, ``BLOCK_M=64``). Rewriting happens at the
exact source positions ``ast`` reports, so comments and formatting survive.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from evaluators.source_tree import parse_source

_NAME = re.compile(r"(BLOCK|TILE|WARPS|STAGES|GROUP|ROWS|COLS|SPLIT|CHUNK|VEC|UNROLL|PER_PROGRAM|TF32X3|"
                   r"CHANNELS_LAST|FLAT_TAPS|DIRECT|GUARD)", re.I)
_LAUNCH_KEYWORDS = {"num_warps", "num_stages"}


@dataclass(frozen=True)
class Tunable:
    name: str
    value: int
    line: int  # 1-based
    col: int
    end_col: int

    @property
    def kind(self) -> str:
        low = self.name.lower()
        if low.endswith(("tf32x3", "channels_last", "flat_taps", "direct", "guard")):
            return "flag"
        if "warps" in low:
            return "warps"
        if "stages" in low:
            return "stages"
        if any(k in low for k in ("rows", "per_program", "split", "group", "unroll")):
            return "count"
        return "block"


RANGES = {"warps": (1, 16), "stages": (1, 5), "count": (1, 64), "block": (16, 8192), "flag": (0, 1)}


def find_tunables(source: str) -> list[Tunable]:
    tree = parse_source(source)
    found: list[Tunable] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and _is_int(value):
                name = targets[0].id
                if name.isupper() and _NAME.search(name):
                    found.append(_make(name, value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg and (kw.arg in _LAUNCH_KEYWORDS or (kw.arg.isupper() and _NAME.search(kw.arg))):
                    if _is_int(kw.value):
                        found.append(_make(kw.arg, kw.value))
    return found


def _is_int(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _make(name: str, node: ast.AST) -> Tunable:
    assert isinstance(node, ast.Constant)
    return Tunable(name, int(node.value), node.lineno, node.col_offset, node.end_col_offset or node.col_offset)


def neighbours(t: Tunable) -> list[int]:
    """Values one step away: doubling and halving (powers of two stay powers of two), within range; a flag
    (``..._TF32X3``, ``..._CHANNELS_LAST``) flips."""
    lo, hi = RANGES[t.kind]
    if t.kind == "flag":
        options = [1 - t.value]
    elif t.kind == "stages":
        options = [t.value - 1, t.value + 1]
    else:
        options = [t.value // 2, t.value * 2]
    return [v for v in options if lo <= v <= hi and v != t.value]


def rewrite(source: str, changes: dict[Tunable, int]) -> str:
    lines = source.splitlines(keepends=True)
    # right-to-left within a line keeps earlier column offsets valid
    for t in sorted(changes, key=lambda t: (t.line, t.col), reverse=True):
        line = lines[t.line - 1]
        lines[t.line - 1] = line[: t.col] + str(changes[t]) + line[t.end_col :]
    return "".join(lines)


SHARED_MEMORY_BYTES = 232448  # the most a block may use on an H100/H200 (227 KiB), the largest of any target GPU


def fits_shared_memory(values: dict[str, int], limit: int = SHARED_MEMORY_BYTES) -> bool:
    """Whether every dot tile (a ``P_BLOCK_M``/``P_BLOCK_N``/``P_BLOCK_K`` triple of one prefix) keeps its
    pipelined operand buffers, (BM x BK + BK x BN) fp32 elements times ``P_STAGES`` (Triton's default of 3
    where the kernel names none), within ``limit`` bytes: a larger one only fails to launch
    (OutOfResources), a node spent for nothing."""
    for name, bm in values.items():
        if not name.endswith("_BLOCK_M"):
            continue
        prefix = name[: -len("BLOCK_M")]
        bn, bk = values.get(prefix + "BLOCK_N"), values.get(prefix + "BLOCK_K")
        if bn is None or bk is None:
            continue
        if (bm * bk + bk * bn) * 4 * values.get(prefix + "STAGES", 3) > limit:
            return False
    return True
