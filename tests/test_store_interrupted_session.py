"""A signal's KeyboardInterrupt landing on any line of a store session (issue #30; seed 1795815044 of
tests/test_interrupt_stress.py): the interrupt path's next write, marking the run interrupted, must still work,
and the file must not stay attached. Before the fix, an interrupt between ATTACH and DETACH left the file
attached to the process's cached host connection, and that write failed with "Unique file handle conflict".

The interrupt is raised by a trace function at the n-th line run in :mod:`kernelevolve.store.duckdb_access`,
for every n the operation reaches: deterministic, on a real DuckDB file."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import duckdb
import pytest

from kernelevolve.store import duckdb_access
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.records import RunRecord
from search.node import Node


def _interrupt_at_line(n: int, operation: Callable[[], Any]) -> bool:
    """Run ``operation``, raising KeyboardInterrupt at its n-th line in duckdb_access; whether it got there."""
    seen, hit = 0, False

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal seen, hit
        if event == "line":
            seen += 1
            if seen == n:
                hit = True
                raise KeyboardInterrupt
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == duckdb_access.__file__ else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        operation()
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(previous)
    return hit


def _add_node(store: MetadataStore, node_id: int) -> None:
    with store.batch():
        store.add_node(Node(run_id="r", node_id=node_id, parent_id=None, depth=1, candidate_hash=f"h{node_id}",
                            status="ok", fitness=1.0))


@pytest.mark.parametrize("kind", ["read", "write", "batch"])
def test_an_interrupted_session_leaves_the_store_usable(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "state" / "ke.duckdb"
    store = MetadataStore(db)
    store.create_run(RunRecord(run_id="r", op="swish", op_path="/ops/swish.py", spec_hash="s", hw="cpu",
                               strategy="greedy", operator="offline", budget=5, seed=0))
    operations: dict[str, Callable[[int], Any]] = {
        "read": lambda n: store.get_run("r"),
        "write": lambda n: store.update_run("r", status="running", best_node_id=n),
        "batch": lambda n: _add_node(store, n),
    }
    n = 0
    while _interrupt_at_line(n := n + 1, lambda: operations[kind](n)):
        store.update_run("r", status="interrupted")  # what run_setup.drive() does after the interrupt
        duckdb.connect(str(db)).close()  # raises if this process still has the file attached
        assert store.get_run("r").status == "interrupted", f"interrupt at line event {n}"
    assert n > 20  # the trace reached the attach and detach code
