"""Progress for long work: a live bar on a terminal, one line per node otherwise (CI logs, pipes)."""

from __future__ import annotations

import sys
from typing import Any

from search.node import Node


class NodeProgress:
    def __init__(self, label: str, total: int, done: int = 0) -> None:
        self.label, self.total = label, total
        self._bar: Any = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("{task.fields[info]}"),
                                 console=Console(stderr=True), transient=False)
            self._task = self._bar.add_task(label, total=total, completed=done, info="")
            self._bar.start()

    def __call__(self, node: Node, count: int, total: int, best: Node | None) -> None:
        best_txt = f"best {best.fitness:.3f} (node {best.node_id})" if best else "no correct node yet"
        info = f"node {node.node_id}: {node.status} {node.fitness:.3f} | {best_txt}"
        if self._bar is not None:
            self._bar.update(self._task, completed=count, info=info)
        else:
            print(f"[{self.label}] {count}/{total} {info}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
