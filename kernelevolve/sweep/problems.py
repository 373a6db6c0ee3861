"""Which problems a sweep runs: KernelBench-format files under a folder, their levels, ``--only`` and ``--shard``.

A problem is a ``.py`` file that defines ``class Model`` and ``get_inputs`` (KernelBench's format; the evaluator
loads it as a spec). Its level is its sub-folder's name (``DIR/level1/x.py`` -> ``level1``), or DIR's own name
for files directly in DIR. Its name is ``level/stem``, what ``--only`` globs match and the matrix shows.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from kernelevolve.errors import UserError

_MODEL = re.compile(r"^class\s+Model\b", re.MULTILINE)
_INPUTS = re.compile(r"^def\s+get_inputs\b", re.MULTILINE)


@dataclass(frozen=True)
class Problem:
    """One problem file; ``name``, ``family``, ``category`` and ``bandwidth_bound`` are what ``coverage_row``
    reads of an op."""

    name: str
    family: str
    path: Path
    category: str = "problem"
    bandwidth_bound: bool = False


def is_problem(path: Path) -> bool:
    """KernelBench's format, read as text (nothing is imported): a Model class and get_inputs."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return bool(_MODEL.search(text) and _INPUTS.search(text))


def discover(root: Path) -> list[Problem]:
    """Every problem under ``root``: its sub-folders' files (one level each) and its own, in name order."""
    root = root.resolve()
    folders = [root] + sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith((".", "_")))
    found = []
    for folder in folders:
        for path in sorted(folder.glob("*.py")):
            if path.is_file() and not path.name.startswith("_") and is_problem(path):
                found.append(Problem(f"{folder.name}/{path.stem}", folder.name, path))
    return sorted(found, key=lambda p: (p.family, p.path.name))


def select(problems: list[Problem], only: str | None) -> list[Problem]:
    """The problems whose ``level/stem`` matches one of the comma-separated globs (all without ``only``)."""
    if not only:
        return problems
    globs = [g.strip() for g in only.split(",") if g.strip()]
    return [p for p in problems if any(fnmatch.fnmatch(p.name, g) for g in globs)]


def parse_shard(which: str | None) -> tuple[int, int] | None:
    """``i/n`` with 0 <= i < n; anything else is bad input."""
    if not which:
        return None
    try:
        i, n = (int(x) for x in which.split("/"))
    except ValueError:
        raise UserError(f"--shard must be i/n (e.g. 0/2), got {which!r}") from None
    if n < 1 or not 0 <= i < n:
        raise UserError(f"--shard {which}: needs 0 <= i < n")
    return i, n


def shard(problems: list[Problem], which: tuple[int, int] | None) -> list[Problem]:
    """Every n-th problem from i (in file order): one sweep per GPU of a host, each with its own share."""
    if which is None:
        return problems
    i, n = which
    return problems[i::n]
