"""The read-only view of a run's graph that policies select from.

Views are backed by a list: the orchestrator keeps its run's nodes in memory (``RunGraph``, loaded from the
metadata store on resume), and tests build small ones; policies never load more than they ask for.
"""

from __future__ import annotations

import math
from typing import Protocol

from search.node import Node


class GraphView(Protocol):
    def count(self) -> int: ...

    def best(self, k: int) -> list[Node]: ...

    def nodes(self) -> list[Node]: ...

    def children_counts(self) -> dict[int | None, int]: ...


class ListGraphView:
    """In-memory view over a list of nodes: for tests and small synthetic landscapes."""

    def __init__(self, nodes: list[Node] | None = None) -> None:
        self._nodes = list(nodes or [])

    def add(self, node: Node) -> None:
        self._nodes.append(node)

    def count(self) -> int:
        return len(self._nodes)

    def best(self, k: int) -> list[Node]:
        good = [n for n in self._nodes if not n.is_buggy and not math.isnan(n.fitness)]  # as the SQL view
        return sorted(good, key=lambda n: (-n.fitness, n.node_id))[:k]

    def nodes(self) -> list[Node]:
        return list(self._nodes)

    def children_counts(self) -> dict[int | None, int]:
        counts: dict[int | None, int] = {}
        for n in self._nodes:
            counts[n.parent_id] = counts.get(n.parent_id, 0) + 1
        return counts
