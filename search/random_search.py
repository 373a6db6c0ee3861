"""Random: the baseline every other policy is compared against."""

from __future__ import annotations

import random

from search.graph import GraphView
from search.node import Node


class RandomPolicy:
    name = "random"

    def __init__(self, drafts: int = 3) -> None:
        self.drafts = drafts

    def select(self, view: GraphView, rng: random.Random) -> Node | None:
        if view.count() < self.drafts:
            return None
        choices: list[Node | None] = [n for n in view.nodes() if not n.is_buggy]
        choices.append(None)
        return rng.choice(choices)
