"""Configured code roots: folders outside the knowledge base that deep search also greps.

A team points deep search at its own kernels or a Triton checkout once, through ``KE_CODE_ROOTS``
(``os.pathsep``-separated, like ``PATH``), or per command with ``--code-root``. A root that is not a
folder is bad input, reported before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

ENV = "KE_CODE_ROOTS"


class CodeRootError(ValueError):
    """A configured code root is not a directory."""


def code_roots(extra: Iterable[str] = ()) -> list[Path]:
    """The environment's roots then ``extra``, resolved, de-duplicated, each checked to be a directory."""
    from kernelevolve.inputs import InputError, directory

    named = [p for p in os.environ.get(ENV, "").split(os.pathsep) if p.strip()]
    out: list[Path] = []
    for raw in [*named, *extra]:
        try:
            path = directory(raw, "code root", ENV if raw in named else "--code-root").resolve()
        except InputError as exc:
            raise CodeRootError(str(exc)) from None
        if path not in out:
            out.append(path)
    return out
