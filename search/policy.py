"""The one protocol every selection policy implements, and the registry the CLI reads."""

from __future__ import annotations

import random
from typing import Protocol

from search.graph import GraphView
from search.node import Node


class SelectionPolicy(Protocol):
    name: str

    def select(self, view: GraphView, rng: random.Random) -> Node | None:
        """The node to expand next; ``None`` means draft a new candidate from the root."""
        ...


def make_policy(name: str, drafts: int = 3) -> SelectionPolicy:
    from search.evolutionary import EvolutionaryPolicy
    from search.greedy import GreedyPolicy
    from search.mcts import MCTSPolicy
    from search.random_search import RandomPolicy

    policies = {"greedy": GreedyPolicy, "mcts": MCTSPolicy, "evolutionary": EvolutionaryPolicy, "random": RandomPolicy}
    assert tuple(policies) == STRATEGIES
    if name in policies:
        return policies[name](drafts=drafts)
    raise KeyError(f"unknown strategy '{name}' (known: {', '.join(STRATEGIES)})")


STRATEGIES = ("greedy", "mcts", "evolutionary", "random")  # the names every command accepts, in this order
