"""One lock around ``ast.parse``, because CPython 3.11 is not thread-safe there.

CPython 3.11 keeps the AST converter's recursion depth in interpreter-wide state.
Two threads parsing at once (the orchestrator's pools judge several runs from
threads of one process) can interleave inside that conversion and fail with
``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905).
Every parse in the project goes through :func:`parse_source`, so they take turns.
"""

from __future__ import annotations

import ast
import threading

_PARSE_LOCK = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time; raises ``SyntaxError`` as it does."""
    with _PARSE_LOCK:
        return ast.parse(source)
