"""Cross-run reuse: a new run's first drafts are the best kernels already stored for the same op.

Why: a kernel that won on one target is usually a better start on another than a knowledge-base sample
(the tiling may change, the algorithm rarely does), and re-searching from scratch wastes the budget that
earlier runs already spent. The seeds are chosen once, when the run is created, and written to the run's
config, so a resumed run drafts from the same seeds; each seeded node records where it came from.
"""

from __future__ import annotations

from typing import Any

from evaluators.identity import source_hash
from kernelevolve.operators.base import Operator, Proposal, ProposalContext
from search.node import Node


class SeededOperator:
    """Wraps an operator: drafts ``i < len(seeds)`` reuse stored kernels, everything else goes to ``inner``."""

    def __init__(self, inner: Operator, seeds: list[dict[str, Any]], sources: list[str]) -> None:
        self.inner, self.seeds, self.sources = inner, seeds, sources
        self.name = inner.name

    # What the orchestrator asks of an operator passes through: a seeded LLM run keeps its context memory and
    # its duplicate handling, and both operators stay offered crossover pairs.
    @property
    def wants_memory(self) -> bool:
        return bool(getattr(self.inner, "wants_memory", False))

    @property
    def supports_crossover(self) -> bool:
        return bool(getattr(self.inner, "supports_crossover", False))

    def propose(self, parent: Node | None, context: ProposalContext) -> list[Proposal]:
        if parent is None and context.draft_index < len(self.seeds):
            source = self.sources[context.draft_index]
            if source_hash(source) not in context.seen_hashes:
                return [Proposal(source, {"kind": "draft", "seeded_from": self.seeds[context.draft_index]})]
        return self.inner.propose(parent, context)
