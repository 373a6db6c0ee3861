"""Monte Carlo tree search over the search graph (docs/architecture.md §1: "MCTS: UCT").

Why: greedy always expands the single fittest node and stays in the first basin it finds. MCTS spends each
expansion where a whole lineage has proven good on average *and* where it has been tried least, so a promising
but under-explored subtree keeps receiving budget even while its leaves are not the global best.

How it maps onto a kernel search, where one "simulation" is an LLM proposal plus a hardware evaluation:

- The tree is the graph itself. The root is virtual: its children are the drafts (``parent_id is None``).
- There are no rollouts and no stored statistics. A node's value Q is the mean fitness of its subtree (itself
  and all descendants, buggy = 0) and its visit count N is the subtree size; both are recomputed from
  ``view.nodes()`` in one O(n) pass, so a resumed run selects exactly as the original would have.
- Progressive widening: a node with N visits may have at most k(N) = ceil(widening_c * N**widening_alpha)
  children. Without it every node has unbounded branching and plain UCT would keep drafting from the root
  forever; with it the root gains drafts at a ~sqrt(N) rate and the rest of the budget goes deeper.
- UCT = Q / best_fitness + exploration * sqrt(ln N_parent / N_child). Fitness is a speedup that can sit
  anywhere between 0.1x and 10x depending on the operator; dividing by the best fitness seen keeps the
  exploitation term in [0, 1], so the exploration constant means the same thing on every operator and
  selection is invariant to rescaling all fitnesses.
- Buggy nodes are leaves of value 0: they count against their parent's mean and visits but are never
  descended into or expanded (a broken kernel is repaired by expanding its correct parent again).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from search.graph import GraphView
from search.node import Node

_TIE_RTOL = 1e-9


def fitness_or_zero(node: Node) -> float:
    """The fitness a node contributes to its subtree's value: 0 for buggy nodes and unmeasured (NaN) ones."""
    return 0.0 if node.is_buggy or math.isnan(node.fitness) else node.fitness


@dataclass
class TreeStats:
    """Per-node subtree statistics; the key ``None`` is the virtual root."""

    children: dict[int | None, list[Node]]
    visits: dict[int | None, int]
    value: dict[int | None, float]
    best_fitness: float


def tree_stats(nodes: list[Node]) -> TreeStats:
    """Children lists, subtree sizes and mean subtree fitness in O(n).

    A node whose parent is not in the view is hung under the root, so a partial view still gives a tree.
    """
    ids = {n.node_id for n in nodes}
    children: dict[int | None, list[Node]] = {None: []}
    for n in nodes:
        children.setdefault(n.parent_id if n.parent_id in ids else None, []).append(n)
    order: list[Node] = list(children[None])  # breadth-first: parents before their children
    for n in order:
        order.extend(children.get(n.node_id, ()))
    total: dict[int | None, float] = {None: 0.0}
    size: dict[int | None, int] = {None: 0}
    for n in reversed(order):  # children before parents: post-order accumulation
        total[n.node_id] = total.get(n.node_id, 0.0) + fitness_or_zero(n)
        size[n.node_id] = size.get(n.node_id, 0) + 1
        parent = n.parent_id if n.parent_id in ids else None
        total[parent] = total.get(parent, 0.0) + total[n.node_id]
        size[parent] = size.get(parent, 0) + size[n.node_id]
    value = {k: total[k] / size[k] for k in size if size[k]}
    best = max((fitness_or_zero(n) for n in nodes), default=0.0)
    return TreeStats(children, size, value, best)


class MCTSPolicy:
    name = "mcts"

    def __init__(self, drafts: int = 3, exploration: float = 1.4, widening_c: float = 1.0,
                 widening_alpha: float = 0.5) -> None:
        self.drafts = drafts
        self.exploration = exploration
        self.widening_c = widening_c
        self.widening_alpha = widening_alpha

    def allowed_children(self, visits: int) -> int:
        """Progressive widening: how many children a node with ``visits`` visits may have."""
        return math.ceil(self.widening_c * visits**self.widening_alpha)

    def uct(self, stats: TreeStats, parent: int | None, child: Node) -> float:
        scale = stats.best_fitness if stats.best_fitness > 0 else 1.0
        exploit = stats.value[child.node_id] / scale
        n_parent = stats.visits[parent]
        explore = math.sqrt(math.log(n_parent) / stats.visits[child.node_id]) if n_parent > 1 else 0.0
        return exploit + self.exploration * explore

    def select(self, view: GraphView, rng: random.Random) -> Node | None:
        if view.count() < self.drafts:
            return None
        stats = tree_stats(view.nodes())
        current: Node | None = None  # the virtual root
        while True:
            key = None if current is None else current.node_id
            kids = stats.children.get(key, [])
            if len(kids) < self.allowed_children(stats.visits.get(key, 0)):
                return current  # widening allows a new child here (at the root: draft)
            open_kids = [c for c in kids if not c.is_buggy]
            if not open_kids:
                return current  # every child is broken: widen here anyway rather than stop
            scores = [self.uct(stats, key, c) for c in open_kids]
            top = max(scores)
            tied = sorted((c for c, s in zip(open_kids, scores, strict=True) if s >= top - _TIE_RTOL * (1 + abs(top))),
                          key=lambda c: c.node_id)
            current = tied[0] if len(tied) == 1 else rng.choice(tied)
