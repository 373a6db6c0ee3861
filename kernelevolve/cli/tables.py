"""The run table ``ke runs`` and ``ke campaign`` both print: one set of columns, one meaning per column.

Why one module: the two commands had drifted apart (``best`` was a node id in one, a fitness in the other,
and op names were cut at different widths until ``aten.logcumsumexp`` read as ``aten.logcumsum``). Columns
are as wide as their longest cell, so no value is ever cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# (header, right-aligned?) of every run table, after any leading columns a command adds (campaign: slot)
RUN_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("run", False), ("op", False), ("hw", False), ("strategy", False), ("status", False), ("nodes", True),
    ("best node", True), ("best fitness", True))


def run_cells(run_id: str, op: str, hw: str, strategy: str, status: str, nodes: int, budget: int,
              best_node: int | None, best_fitness: float | None) -> list[str]:
    """One run's cells, in ``RUN_COLUMNS`` order; ``-`` where the run has no correct node yet."""
    return [run_id, op, hw, strategy, status, f"{nodes}/{budget}", "-" if best_node is None else str(best_node),
            "-" if best_fitness is None else f"{best_fitness:.3f}"]


def render(columns: Sequence[tuple[str, bool]], rows: Sequence[Sequence[Any]]) -> list[str]:
    """The header and one line per row, each column padded to its widest cell (header included)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(header)] + [len(row[i]) for row in cells]) for i, (header, _) in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if right else v.ljust(w)
                 for v, w, (_, right) in zip(values, widths, columns, strict=True)]
        return "  ".join(parts).rstrip()

    return [line([h for h, _ in columns])] + [line(row) for row in cells]
