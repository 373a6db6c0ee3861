"""Context memory (docs/architecture.md §8): what the search has learned, read from the store, for the next proposal.

For the parent being expanded it gathers the lineage (ancestors and what each step changed), the siblings
already tried from the same parent and how they fared, the run's global best, and the failure classes seen
so far with an example reason each; it classifies the parent's state (an error class, or memory / compute /
latency bound from the roofline). Items carry a priority so that ``render`` can fit a token budget by
dropping the least useful evidence first: the parent's own evaluation outranks history, history outranks
the global best's code.

Everything here runs on the orchestrator thread (it reads DuckDB); the operator receives the result.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from evaluators.result import EvaluationResult
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from search.node import Node

CHARS_PER_TOKEN = 4  # a conservative average for code and English; the budget is a guard, not a bill


@dataclass
class MemoryItem:
    priority: int  # lower is more important
    title: str
    text: str

    @property
    def tokens(self) -> int:
        return (len(self.title) + len(self.text)) // CHARS_PER_TOKEN + 1


@dataclass
class RunMemory:
    parent_state: str
    bottleneck: str | None
    items: list[MemoryItem] = field(default_factory=list)

    def render(self, budget_tokens: int = 6000) -> str:
        """The items that fit the budget, most important first, then shown in a stable reading order."""
        kept, used = [], 0
        for item in sorted(self.items, key=lambda i: i.priority):
            if used + item.tokens > budget_tokens:
                continue
            kept.append(item)
            used += item.tokens
        order = {id(item): n for n, item in enumerate(self.items)}
        return "\n\n".join(f"### {i.title}\n{i.text}" for i in sorted(kept, key=lambda i: order[id(i)]))


def dominant_bottleneck(result: EvaluationResult) -> str | None:
    """The result's bottleneck, else the one most of its measured cases share (simulated results and GPU
    results both carry per-case roofline verdicts; small test cases carry none)."""
    if result.bottleneck:
        return result.bottleneck
    votes = Counter(c.bottleneck for c in result.cases if c.bottleneck)
    return votes.most_common(1)[0][0] if votes else None


def classify(result: EvaluationResult | None) -> str:
    """The parent's state: its failure status, else what bounds it, else 'correct'."""
    if result is None:
        return "root"
    if result.status != "ok":
        return result.status
    bound = dominant_bottleneck(result)
    return f"{bound}-bound" if bound else "correct"


def describe_result(result: EvaluationResult) -> str:
    lines = [f"status: {result.status}" + (f" ({result.reason})" if result.reason else ""),
             f"fitness: {result.fitness:.3f}" + (" (simulated)" if result.simulated else "")]
    if result.speedup_vs_eager is not None:
        lines.append(f"speedup vs eager: {result.speedup_vs_eager:.3f}")
    if result.speedup_vs_compile is not None:
        lines.append(f"speedup vs torch.compile: {result.speedup_vs_compile:.3f}")
    bound = dominant_bottleneck(result)
    if bound:
        lines.append(f"bottleneck: {bound}" + (f", {result.roofline_fraction:.0%} of the roofline floor"
                                              if result.roofline_fraction else ""))
    # Production cases (timed or simulated) first: the small interpreter test cases say little about speed.
    for case in sorted(result.cases, key=lambda c: c.latency_ms is None)[:6]:
        parts = [f"case {case.name}: {case.status}"]
        if case.latency_ms is not None:
            parts.append(f"{case.latency_ms:.4f} ms")
        if case.floor_ms is not None:
            parts.append(f"floor {case.floor_ms:.4f} ms")
        if case.fraction_of_floor is not None:
            parts.append(f"{case.fraction_of_floor:.0%} of floor")
        if case.floor_flag:
            parts.append(f"flagged {case.floor_flag} (faster than its stated floor)")
        if case.bottleneck:
            parts.append(case.bottleneck)
        if case.error:
            parts.append(case.error[:200])
        lines.append("- " + ", ".join(parts))
    return "\n".join(lines)


def _change(node: Node) -> str:
    meta = node.operator_meta
    return str(meta.get("changes") or meta.get("summary") or meta.get("sample") or meta.get("kind") or "")


def _fitness(node: Node) -> str:
    return "buggy" if node.is_buggy or math.isnan(node.fitness) else f"{node.fitness:.3f}"


def gather(store: MetadataStore, objects: ObjectStore, run_id: str, parent: Node | None,
           parent_result: EvaluationResult | None) -> RunMemory:
    memory = RunMemory(classify(parent_result), dominant_bottleneck(parent_result) if parent_result else None)
    if parent is not None and parent_result is not None:
        memory.items.append(MemoryItem(0, f"Parent node {parent.node_id}: evaluation", describe_result(parent_result)))
        lineage = list(reversed(store.ancestors(run_id, parent.node_id)))
        if lineage:
            steps = [f"- node {n.node_id}: {_fitness(n)} {n.status}; {_change(n)}" for n in lineage]
            memory.items.append(MemoryItem(2, "Lineage (root first)", "\n".join(steps)))
        siblings = [n for n in store.children(run_id, parent.node_id)]
        if siblings:
            tried = [f"- node {n.node_id}: {_fitness(n)} {n.status}; {_change(n)}"
                     + (f" ({n.reason[:160]})" if n.reason else "") for n in siblings]
            memory.items.append(MemoryItem(1, f"Already tried from node {parent.node_id} (do not repeat)",
                                           "\n".join(tried)))
    failures = store.failure_summary(run_id)
    if failures:
        text = "\n".join(f"- {status}: {count} node(s), e.g. {reason[:200]}" for status, count, reason in failures)
        memory.items.append(MemoryItem(3, "Failures so far in this run", text))
    best = store.best_nodes(run_id, 1)
    if best and (parent is None or best[0].node_id != parent.node_id):
        code = objects.get_text(best[0].path_ref)
        memory.items.append(MemoryItem(4, f"Best so far: node {best[0].node_id}, fitness {best[0].fitness:.3f}",
                                       f"```python\n{code}\n```"))
    return memory


def overview_markdown(node: Node, result: EvaluationResult, memory: RunMemory | None, analysis: str = "") -> str:
    """The node's overview.md: what it is, how it did, and what to try next (rule-based unless an LLM wrote
    ``analysis``)."""
    state = classify(result)
    advice = {
        "compile_error": "Fix the compile error first; keep the algorithm.",
        "incorrect": "Check masks, strides and accumulation dtype against the reference on the failing case.",
        "runtime_error": "Read the error; out-of-bounds pointers and shape mismatches are the usual causes.",
        "rejected": "The candidate broke a rule of the harness; see knowledge_base/constraints/.",
        "timeout": "The kernel or its compile took too long; reduce unrolling or block sizes.",
        "crash": "The worker died; suspect out-of-bounds accesses or huge allocations.",
        "memory-bound": "Cut DRAM traffic: fuse, reuse tiles on chip, vectorise and coalesce accesses.",
        "compute-bound": "Use tensor cores (tl.dot) with fp32 accumulation, larger tiles, fewer wasted lanes.",
        "latency-bound": "Launch and latency dominate: fewer launches, more work per program, persistence.",
    }.get(state, "Explore tunables and structure around this kernel.")
    lines = [f"# Node {node.node_id}", "", f"- parent: {node.parent_id if node.parent_id else 'root'}",
             f"- change: {_change(node) or '-'}", f"- state: {state}", "", "## Evaluation", "",
             describe_result(result), "", "## Next", "", advice]
    if analysis:
        lines += ["", "## Analysis (operator)", "", analysis.strip()]
    if memory is not None and memory.items:
        lines += ["", "## Context the operator saw", "", memory.render(1500)]
    return "\n".join(lines) + "\n"
