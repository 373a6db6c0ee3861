"""The offline operator (no LLM): drafts from knowledge-base samples and mutates tunables.

Drafts (children of the root) cycle through the op's code samples, then mutated copies of them.
Expansions change one or two tunables of the parent by one step or, one time in STRUCTURAL_RATE (and
whenever the numeric neighbourhood is exhausted), apply a structural rewrite to its code
(``structural.py``). Any source already seen in the run is skipped, so every node is a new candidate.
"""

from __future__ import annotations

import random
from dataclasses import replace

from evaluators.identity import source_hash
from kernelevolve.knowledge.samples import CodeSample, code_samples
from kernelevolve.operators.base import OperatorError, Proposal, ProposalContext, SpaceExhausted
from kernelevolve.operators.structural import apply, structural_variants
from kernelevolve.operators.tunables import Tunable, find_tunables, fits_shared_memory, neighbours, rewrite
from search.node import Node

MAX_ATTEMPTS = 96
STRUCTURAL_RATE = 0.2


class OfflineOperator:
    name = "offline"
    supports_crossover = True

    def __init__(self, samples: list[CodeSample] | None = None, per_structure: bool = False) -> None:
        self._samples = samples
        self._per_structure = per_structure  # lower one draft per input structure (lowering/variants.py)

    def samples(self, op: str, spec_source: str = "", target: str = "") -> list[CodeSample]:
        """The op's knowledge-base samples; without any, the template lowering of the spec's reference."""
        if self._samples is None:
            self._samples = code_samples(op) or lowered_samples(op, spec_source, target, self._per_structure)
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
        proposal = None
        if context.second_parent_source is not None and context.second_parent is not None:
            proposal = crossover(context.parent_source, context.second_parent_source, context.rng,
                                 context.seen_hashes)
            if proposal is not None:
                proposal.meta["second_parent_id"] = context.second_parent.node_id
        structural_first = context.rng.random() < STRUCTURAL_RATE
        if proposal is None and structural_first:
            proposal = restructure(context.parent_source, context.rng, context.seen_hashes)
        if proposal is None:
            proposal = self._mutate(context.parent_source, context.rng, context.seen_hashes, context.target != "cpu")
        if proposal is None and not structural_first:  # (when it went first, it already found nothing)
            proposal = restructure(context.parent_source, context.rng, context.seen_hashes)
        if proposal is None:  # the parent's neighbourhood is exhausted: draft instead
            return [self._draft(context)]
        proposal.meta["parent_id"] = parent.node_id
        return [proposal]

    def _draft(self, context: ProposalContext) -> Proposal:
        samples = self.samples(context.op, context.spec_source, context.target)
        sample = samples[context.draft_index % len(samples)]
        meta = {"kind": "draft", "sample": sample.path.name, "title": sample.title}
        if source_hash(sample.source) not in context.seen_hashes:
            return Proposal(sample.source, meta)
        for sample in samples:  # the planned one was used: any unseen sample, else a mutation of one
            if source_hash(sample.source) not in context.seen_hashes:
                return Proposal(sample.source, {**meta, "sample": sample.path.name, "title": sample.title})
        for _ in range(len(samples)):
            sample = context.rng.choice(samples)
            mutated = self._mutate(sample.source, context.rng, context.seen_hashes, context.target != "cpu")
            if mutated is not None:
                mutated.meta.update({"kind": "draft", "sample": sample.path.name})
                return mutated
        raise SpaceExhausted(f"every variant reachable from the '{context.op}' samples was already tried")

    def _mutate(self, source: str, rng: random.Random, seen: set[str], gpu: bool = False) -> Proposal | None:
        """A random walk of a few steps over the tunables; the walk lengthens as nearby variants run out. On
        a GPU target, a walk whose dot tiles cannot fit shared memory is skipped (it would only fail)."""
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
            if not changes or (gpu and not fits_shared_memory({t.name: v for t, v in values.items()})):
                continue
            child = rewrite(source, changes)
            if source_hash(child) not in seen:
                described = {t.name: [t.value, v] for t, v in changes.items()}
                return Proposal(child, {"kind": "mutate", "changes": described})
        return None


def lowered_samples(op: str, spec_source: str, target: str = "", per_structure: bool = False) -> list[CodeSample]:
    """The reference lowered to Triton offline (kernelevolve.lowering); [] when there is no spec text.

    A reference the lowering cannot handle stops the run with one line naming the op that has no lowering."""
    if not spec_source.strip():
        return []
    from pathlib import Path

    from kernelevolve.lowering import LoweringError, lower_spec_text

    try:
        source = lower_spec_text(op, spec_source, target, per_structure)
    except LoweringError as exc:
        raise OperatorError(f"offline lowering of '{op}' failed: {exc}") from None
    samples = [CodeSample(Path(f"lowered_{op}.py"), op, "template lowering of the reference", source)]
    guards = {t: 1 for t in find_tunables(source) if t.name.endswith("_GUARD") and t.value == 0}
    if guards:  # the second draft: every stencil load in bounds (lowering/indexing.py, padded_load)
        samples.append(CodeSample(Path(f"lowered_{op}_guarded.py"), op,
                                  "template lowering of the reference, masked loads kept in bounds",
                                  rewrite(source, guards)))
    return samples


def restructure(source: str, rng: random.Random, seen: set[str]) -> Proposal | None:
    """One structural rewrite of the parent not yet seen in the run, chosen at random."""
    variants = structural_variants(source)
    rng.shuffle(variants)
    for variant in variants:
        child = apply(source, variant)
        if source_hash(child) not in seen:
            return Proposal(child, {"kind": "structural", "change": variant.description})
    return None


def crossover(first: str, second: str, rng: random.Random, seen: set[str]) -> Proposal | None:
    """Uniform crossover of two variants of one kernel: each differing tunable comes from either parent.

    Only kernels with the same skeleton (the same sample, differing in tunable values only) are combined,
    so the child is as valid as its parents; anything else returns None and the caller mutates instead."""
    mine = {t.name: t for t in find_tunables(first)}
    theirs = {t.name: t.value for t in find_tunables(second)}
    if set(mine) != set(theirs):
        return None
    differing = {mine[name]: value for name, value in theirs.items() if mine[name].value != value}
    if not differing or rewrite(first, differing) != second:
        return None  # identical, or different code around the tunables
    for _ in range(8):
        take = {t: v for t, v in differing.items() if rng.random() < 0.5}
        if not take or len(take) == len(differing):
            continue  # all from one parent is not a cross
        child = rewrite(first, take)
        if source_hash(child) not in seen:
            return Proposal(child, {"kind": "crossover", "changes": {t.name: [t.value, v] for t, v in take.items()}})
    return None
