"""The offline operator (no LLM): drafts from knowledge-base samples and mutates tunables.

Drafts (children of the root) cycle through the op's code samples, then mutated copies of them.
Expansions change one or two tunables of the parent by one step, skipping any source already seen
in the run, so every node is a new candidate.
"""

from __future__ import annotations

import random
from dataclasses import replace

from evaluators.identity import source_hash
from kernelevolve.kb import CodeSample, code_samples
from kernelevolve.operators.base import OperatorError, Proposal, ProposalContext
from kernelevolve.operators.tunables import Tunable, find_tunables, neighbours, rewrite
from search.node import Node

MAX_ATTEMPTS = 96


class OfflineOperator:
    name = "offline"

    def __init__(self, samples: list[CodeSample] | None = None) -> None:
        self._samples = samples

    def samples(self, op: str) -> list[CodeSample]:
        if self._samples is None:
            self._samples = code_samples(op)
        if not self._samples:
            raise OperatorError(
                f"the offline operator has no seed kernel for op '{op}': add one to knowledge_base/code_samples/ "
                "(front matter 'op: <name>') or use an LLM operator"
            )
        return self._samples

    def propose(self, parent: Node | None, context: ProposalContext) -> list[Proposal]:
        if parent is None:
            return [self._draft(context)]
        assert context.parent_source is not None
        proposal = self._mutate(context.parent_source, context.rng, context.seen_hashes)
        if proposal is None:  # the parent's neighbourhood is exhausted: draft instead
            return [self._draft(context)]
        proposal.meta["parent_id"] = parent.node_id
        return [proposal]

    def _draft(self, context: ProposalContext) -> Proposal:
        samples = self.samples(context.op)
        sample = samples[context.draft_index % len(samples)]
        meta = {"kind": "draft", "sample": sample.path.name, "title": sample.title}
        if source_hash(sample.source) not in context.seen_hashes:
            return Proposal(sample.source, meta)
        for sample in samples:  # the planned one was used: any unseen sample, else a mutation of one
            if source_hash(sample.source) not in context.seen_hashes:
                return Proposal(sample.source, {**meta, "sample": sample.path.name, "title": sample.title})
        for _ in range(len(samples)):
            sample = context.rng.choice(samples)
            mutated = self._mutate(sample.source, context.rng, context.seen_hashes)
            if mutated is not None:
                mutated.meta.update({"kind": "draft", "sample": sample.path.name})
                return mutated
        raise OperatorError(f"every variant reachable from the '{context.op}' samples was already tried")

    def _mutate(self, source: str, rng: random.Random, seen: set[str]) -> Proposal | None:
        """A random walk of a few steps over the tunables; the walk lengthens as nearby variants run out."""
        tunables = [t for t in find_tunables(source) if neighbours(t)]
        if not tunables:
            return None
        for attempt in range(MAX_ATTEMPTS):
            steps = rng.choice((1, 1, 2)) + attempt // 16
            values = {t: t.value for t in tunables}
            for _ in range(steps):
                t = rng.choice(tunables)
                options = neighbours(replace(t, value=values[t]))
                if options:
                    values[t] = rng.choice(options)
            changes: dict[Tunable, int] = {t: v for t, v in values.items() if v != t.value}
            if not changes:
                continue
            child = rewrite(source, changes)
            if source_hash(child) not in seen:
                described = {t.name: [t.value, v] for t, v in changes.items()}
                return Proposal(child, {"kind": "mutate", "changes": described})
        return None
