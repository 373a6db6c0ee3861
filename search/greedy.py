"""Greedy: always expand the fittest correct node.

Ties (common on correctness-only targets, where every correct node scores 1.0) go to the node with the
fewest children, then the oldest, so expansion spreads over equally good nodes instead of hammering one.
"""

from __future__ import annotations

import random

from search.graph import GraphView
from search.node import Node

_TIE_RTOL = 1e-9


class GreedyPolicy:
    name = "greedy"

    def __init__(self, drafts: int = 3, top_k: int = 32) -> None:
        self.drafts = drafts
        self.top_k = top_k

    def select(self, view: GraphView, rng: random.Random) -> Node | None:
        if view.count() < self.drafts:
            return None
        best = view.best(self.top_k)
        if not best:
            return None  # nothing correct yet: draft again rather than mutate a broken kernel
        top = best[0].fitness
        tied = [n for n in best if n.fitness >= top * (1 - _TIE_RTOL)]
        children = view.children_counts()
        return min(tied, key=lambda n: (children.get(n.node_id, 0), n.node_id))
