"""Island-model evolutionary search: tournament selection in per-island populations (docs/architecture.md §1).

Why islands: a single population converges on whatever lineage got ahead first. Splitting the drafts into
islands that evolve separately keeps several lineages (say, a tiled and a persistent-kernel design) alive long
enough to be judged on how far they can be pushed, and periodic migration still lets a clearly better design
compete everywhere.

Everything is derived from the graph on each call, with no hidden state, so a resumed run behaves identically:

- Islands: drafts (``parent_id is None``) in node_id order go round-robin to islands (i-th draft -> island
  ``i % islands``); every other node inherits its root ancestor's island.
- Turn: the island whose turn it is is ``view.count() % islands``, so islands alternate expansion by expansion.
- Population: the ``population`` fittest non-buggy nodes of the island. Ties go to the newest node (as in
  regularized evolution): on correctness-only targets every correct node scores 1.0, and oldest-first ties would
  freeze the population at the first few nodes forever.
- Selection: a tournament of ``tournament`` distinct members sampled with the rng; the fittest wins (ties: fewest
  children, then newest, so equal nodes share the expansions). An island without a correct node yet returns
  ``None``: draft, which seeds the islands round-robin, so an empty island is seeded within ``islands`` drafts.
- Migration: at every step where ``view.count()`` is a positive multiple of ``migration_every``, the tournament is
  drawn from the island's population plus the best node of all the *other* islands, and that migrant is always
  one of the contestants (sampled uniformly it would enter only ``tournament / (population + 1)`` of the rare
  migration steps). It wins only if it beats the island's sampled members. Because islands are defined by
  ancestry, the migrant's child belongs to the migrant's island: migration moves an expansion to the better
  lineage rather than copying genes into this island. ``migration_every <= 0`` disables it.
- Crossover: ``select_pair`` returns two tournament winners, the second from another island when one has a
  correct node, for operators that take two parents; ``select_parents`` asks for a pair at
  ``crossover_rate`` when the operator can combine two.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass

from search.graph import GraphView
from search.node import Node


@dataclass
class IslandState:
    """Populations per island (fittest first), each node's island, and children counts for tie-breaking."""

    populations: list[list[Node]]
    island: dict[int, int]
    children: dict[int | None, int]


def _correct(node: Node) -> bool:
    return not node.is_buggy and not math.isnan(node.fitness)


class EvolutionaryPolicy:
    name = "evolutionary"

    def __init__(self, drafts: int = 3, islands: int = 2, population: int = 8, tournament: int = 3,
                 migration_every: int = 10, crossover_rate: float = 0.3) -> None:
        if islands < 1 or population < 1 or tournament < 1:
            raise ValueError("islands, population and tournament must be at least 1")
        self.crossover_rate = crossover_rate
        self.drafts = drafts
        self.islands = islands
        self.population = population
        self.tournament = tournament
        self.migration_every = migration_every

    def state(self, nodes: list[Node]) -> IslandState:
        """Islands by root ancestry in O(n); a node whose parent is not in the view counts as a draft."""
        ids = {n.node_id for n in nodes}
        kids: dict[int | None, list[Node]] = {}
        for n in nodes:
            kids.setdefault(n.parent_id if n.parent_id in ids else None, []).append(n)
        island: dict[int, int] = {}
        order: list[Node] = []
        for i, draft in enumerate(sorted(kids.get(None, []), key=lambda n: n.node_id)):
            island[draft.node_id] = i % self.islands
            order.append(draft)
        for n in order:  # breadth-first: descendants inherit
            for c in kids.get(n.node_id, ()):
                island[c.node_id] = island[n.node_id]
                order.append(c)
        members: list[list[Node]] = [[] for _ in range(self.islands)]
        for n in order:
            if _correct(n):
                members[island[n.node_id]].append(n)
        pops = [heapq.nsmallest(self.population, m, key=lambda n: (-n.fitness, -n.node_id)) for m in members]
        return IslandState(pops, island, {k: len(v) for k, v in kids.items()})

    def _winner(self, entrants: list[Node], st: IslandState) -> Node:
        return min(entrants, key=lambda n: (-n.fitness, st.children.get(n.node_id, 0), -n.node_id))

    def _tournament(self, pool: list[Node], st: IslandState, rng: random.Random, seeded: Node | None = None) -> Node:
        size = self.tournament - (seeded is not None)
        entrants = rng.sample(pool, min(size, len(pool)))
        return self._winner(entrants + ([seeded] if seeded is not None else []), st)

    def migrant(self, st: IslandState, home: int) -> Node | None:
        """The best node of all islands other than ``home``."""
        others = [p[0] for i, p in enumerate(st.populations) if i != home and p]
        return min(others, key=lambda n: (-n.fitness, -n.node_id)) if others else None

    def is_migration_step(self, count: int) -> bool:
        return self.migration_every > 0 and count > 0 and count % self.migration_every == 0

    def _select(self, view: GraphView, rng: random.Random) -> tuple[Node, IslandState] | None:
        count = view.count()
        if count < self.drafts:
            return None
        st = self.state(view.nodes())
        home = count % self.islands
        pool = st.populations[home]
        if not pool:
            return None  # this island has nothing correct yet: draft
        migrant = self.migrant(st, home) if self.is_migration_step(count) else None
        return self._tournament(pool, st, rng, seeded=migrant), st

    def select(self, view: GraphView, rng: random.Random) -> Node | None:
        picked = self._select(view, rng)
        return None if picked is None else picked[0]

    def select_parents(self, view: GraphView, rng: random.Random) -> tuple[Node | None, Node | None]:
        """(parent, second parent): a crossover pair with probability ``crossover_rate`` when the operator can
        combine two parents (the orchestrator only asks then), else this step's single winner and None."""
        if rng.random() < self.crossover_rate:
            pair = self.select_pair(view, rng)
            if pair is not None:
                return pair
        return self.select(view, rng), None

    def select_pair(self, view: GraphView, rng: random.Random) -> tuple[Node, Node] | None:
        """Two parents for crossover: this step's winner and a tournament winner from another island.

        Falls back to a second winner from the same island when no other island has a correct node; ``None``
        when this step would draft or the graph has a single correct node (expand it with ``select`` instead).
        """
        picked = self._select(view, rng)
        if picked is None:
            return None
        first, st = picked
        home = st.island[first.node_id]
        others = [i for i, p in enumerate(st.populations) if i != home and p]
        if others:
            pool = st.populations[rng.choice(others)]
        else:
            pool = [n for n in st.populations[home] if n.node_id != first.node_id]
        if not pool:
            return None
        return first, self._tournament(pool, st, rng)
