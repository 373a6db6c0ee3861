"""What the api needs of a progress display: the CLI passes its terminal board, a script passes nothing.

A factory, not a board: the api makes the board only once the executor runs (a live display started earlier
would swallow the executor's own log lines) and closes it before the executor, as the commands always did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from search.node import Node

ProgressFn = Callable[[Node, int, int, Node | None], None]


class Progress(Protocol):
    """One display for a command; ``track`` has the shape ``run_setup.drive`` calls once per run."""

    def track(self, label: str, total: int, done: int = 0) -> ProgressFn: ...

    def note(self, message: str) -> None: ...

    def close(self) -> None: ...


class Silent:
    """No display: what a caller that passed no progress factory gets (the api itself never prints)."""

    def track(self, label: str, total: int, done: int = 0) -> ProgressFn:
        return lambda node, count, total_, best: None

    def note(self, message: str) -> None:
        return None

    def close(self) -> None:
        return None


def board(factory: Callable[[], Progress] | None) -> Progress:
    """The caller's display, else a silent one."""
    return factory() if factory is not None else Silent()
