"""The operator interface every backend implements (docs/architecture.md §8)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluators.result import EvaluationResult
from search.node import Node


@dataclass
class ProposalContext:
    op: str
    target: str
    rng: random.Random
    parent_source: str | None = None
    parent_result: EvaluationResult | None = None
    seen_hashes: set[str] = field(default_factory=set)
    draft_index: int = 0
    vendor: str | None = None
    spec_source: str = ""
    memory: Any = None  # kernelevolve.memory.RunMemory, gathered on the orchestrator thread for LLM operators
    second_parent: Node | None = None  # crossover: the other parent (operators with supports_crossover)
    second_parent_source: str | None = None


@dataclass
class Proposal:
    source: str
    meta: dict[str, Any] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    artifacts: dict[str, str] = field(default_factory=dict)  # extra files for the node (prompt, response)


class OperatorError(Exception):
    """The operator cannot produce a candidate for this op (a user-facing, one-line message)."""


class SpaceExhausted(OperatorError):
    """Every candidate the operator can reach was already tried: the search is over, not broken, so a run
    that holds nodes ends normally (its winner re-measured, stop reason 'exhausted') instead of failing."""


class Operator(Protocol):
    name: str

    def propose(self, parent: Node | None, context: ProposalContext) -> list[Proposal]: ...
