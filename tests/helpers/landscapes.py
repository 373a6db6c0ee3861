"""Synthetic search graphs and landscapes shared by the policy tests: places where the right behaviour is known."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from search.graph import ListGraphView
from search.node import Node


def node(i: int, parent: int | None, fitness: float, status: str = "ok") -> Node:
    return Node("r", i, parent, 1 if parent is None else 2, f"h{i}", status, fitness)


def deceptive(x: float) -> float:
    """Two basins on [0, 100]: a broad, mediocre one at 25 that most drafts land in, a narrow, better one at 80."""
    return 0.2 + 1.0 * math.exp(-(((x - 25) / 20) ** 2)) + 2.0 * math.exp(-(((x - 80) / 6) ** 2))


def simulate(policy, seed: int, budget: int, landscape: Callable[[float], float] = deceptive, scale: float = 1.0,
             sigma: float = 4.0, p_bug: float = 0.15) -> tuple[ListGraphView, dict[int, float], list[int | None]]:
    """A search loop: a draft lands uniformly on [0, 100], a child steps N(0, sigma) from its parent, and a
    fraction p_bug of candidates are broken. The landscape's randomness is independent of the policy's."""
    view, pos, picks = ListGraphView(), {}, []
    env = random.Random(seed)
    for i in range(budget):
        parent = policy.select(view, random.Random(f"{seed}:{i}"))
        assert parent is None or not parent.is_buggy
        picks.append(None if parent is None else parent.node_id)
        x = env.uniform(0, 100) if parent is None else min(100.0, max(0.0, pos[parent.node_id] + env.gauss(0, sigma)))
        pos[i] = x
        bug = env.random() < p_bug
        view.add(node(i, picks[-1], 0.0 if bug else scale * landscape(x), "incorrect" if bug else "ok"))
    return view, pos, picks
