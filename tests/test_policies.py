"""Selection policies and termination rules on synthetic graphs where the right choice is known."""

from __future__ import annotations

import random

import pytest

from search.graph import ListGraphView
from search.greedy import GreedyPolicy
from search.node import Node
from search.policy import make_policy
from search.random_search import RandomPolicy
from search.termination import Termination


def node(i: int, parent: int | None, fitness: float, status: str = "ok") -> Node:
    return Node("r", i, parent, 1 if parent is None else 2, f"h{i}", status, fitness)


def test_greedy_drafts_first_then_expands_the_fittest() -> None:
    view = ListGraphView()
    policy = GreedyPolicy(drafts=2)
    assert policy.select(view, random.Random(0)) is None
    view.add(node(1, None, 1.5))
    assert policy.select(view, random.Random(0)) is None
    view.add(node(2, None, 2.5))
    view.add(node(3, None, 9.0, status="incorrect"))  # buggy nodes never win, whatever fitness says
    assert policy.select(view, random.Random(0)).node_id == 2


def test_greedy_breaks_ties_by_fewest_children() -> None:
    view = ListGraphView([node(1, None, 1.0), node(2, None, 1.0), node(3, 1, 1.0)])
    assert GreedyPolicy(drafts=1).select(view, random.Random(0)).node_id == 2


def test_greedy_redrafts_when_nothing_is_correct() -> None:
    view = ListGraphView([node(1, None, 0.0, "compile_error"), node(2, None, 0.0, "crash")])
    assert GreedyPolicy(drafts=1).select(view, random.Random(0)) is None


def test_random_only_picks_correct_nodes_or_root() -> None:
    view = ListGraphView([node(1, None, 1.0), node(2, None, 0.0, "incorrect"), node(3, 1, 2.0)])
    picks = {getattr(RandomPolicy(drafts=1).select(view, random.Random(s)), "node_id", None) for s in range(200)}
    assert picks == {1, 3, None}


def test_policy_registry() -> None:
    assert make_policy("greedy").name == "greedy"
    assert make_policy("mcts").name == "mcts" and make_policy("evolutionary").name == "evolutionary"
    with pytest.raises(KeyError):
        make_policy("annealing")


def test_termination_rules() -> None:
    view = ListGraphView([node(1, None, 1.0), node(2, 1, 3.0), node(3, 2, 2.0), node(4, 2, 2.5)])
    assert Termination(budget=4).reason(view, 0) == "budget"
    assert Termination(budget=10, time_limit_s=5).reason(view, 6) == "time_limit"
    assert Termination(budget=10, fitness_target=3.0).reason(view, 0) == "fitness_target"
    assert Termination(budget=10, stall_after=2).reason(view, 0) == "stalled"
    assert Termination(budget=10, stall_after=3).reason(view, 0) is None
