"""Progress for long work: live bars on a terminal (one per run), one line per node otherwise (CI logs, pipes)."""

from __future__ import annotations

import sys
from typing import Any

from kernelevolve.api.progress import ProgressFn
from search.node import Node


class ProgressBoard:
    """One board for a command; each run being searched gets its own bar (or its own line prefix). A
    ``kernelevolve.api.progress.Progress``: the commands pass the class, and the api makes it when work starts."""

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
        task = self.add(label, total, done)

        def update(node: Node, count: int, total_: int, best: Node | None) -> None:
            best_txt = f"best {best.fitness:.3f} (node {best.node_id})" if best else "no correct node yet"
            self.show(task, label, count, total_, f"node {node.node_id}: {node.status} {node.fitness:.3f} | {best_txt}")

        return update

    def add(self, label: str, total: int, done: int = 0) -> Any:
        """A bar on a terminal (None otherwise: lines are printed instead)."""
        return self._bar.add_task(label, total=total, completed=done, info="") if self._bar is not None else None

    def show(self, task: Any, label: str, count: int, total: int, info: str) -> None:
        if self._bar is not None:
            self._bar.update(task, completed=count, info=info)
        else:
            print(f"[{label}] {count}/{total} {info}", file=sys.stderr, flush=True)

    def note(self, message: str) -> None:
        if self._bar is not None:
            self._bar.console.print(message)
        else:
            print(message, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


class SweepProgress:
    """One bar for many small runs (a sweep): ops done and ops correct so far, not 160 bars.

    ``track`` has the shape ``drive`` expects of a per-run tracker; a run counts as done when its node count
    reaches its budget (or its last node arrives), and as correct once any of its nodes is."""

    def __init__(self, label: str, total: int, done: int) -> None:
        self._board, self._label, self._total = ProgressBoard(), label, total
        self._done, self._correct = done, 0
        self._task = self._board.add(label, total, done)

    def track(self, label: str, total: int, done: int = 0) -> ProgressFn:
        finished = done >= total

        def update(node: Node, count: int, total_: int, best: Node | None) -> None:
            nonlocal finished
            if finished or count < total_:
                return
            finished = True
            self._done += 1
            self._correct += best is not None
            op = label.split(" ")[0].rsplit("@", 1)[0].removeprefix("aten.")
            info = f"{self._correct} correct in this session | {op}: " + (
                "ok" if best is not None else node.status)
            self._board.show(self._task, self._label, self._done, self._total, info)

        return update

    def note(self, message: str) -> None:
        self._board.note(message)

    def close(self) -> None:
        self._board.close()
