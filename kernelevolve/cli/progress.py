"""Progress for long work: live bars on a terminal (one per run), one line per node otherwise (CI logs, pipes)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from search.node import Node

ProgressFn = Callable[[Node, int, int, Node | None], None]


class ProgressBoard:
    """One board for a command; each run being searched gets its own bar (or its own line prefix)."""

    def __init__(self) -> None:
        self._bar: Any = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("{task.fields[info]}"),
                                 console=Console(stderr=True), transient=False)
            self._bar.start()

    def track(self, label: str, total: int, done: int = 0) -> ProgressFn:
        task = self._bar.add_task(label, total=total, completed=done, info="") if self._bar is not None else None

        def update(node: Node, count: int, total_: int, best: Node | None) -> None:
            best_txt = f"best {best.fitness:.3f} (node {best.node_id})" if best else "no correct node yet"
            info = f"node {node.node_id}: {node.status} {node.fitness:.3f} | {best_txt}"
            if self._bar is not None:
                self._bar.update(task, completed=count, info=info)
            else:
                print(f"[{label}] {count}/{total_} {info}", file=sys.stderr, flush=True)

        return update

    def note(self, message: str) -> None:
        if self._bar is not None:
            self._bar.console.print(message)
        else:
            print(message, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
