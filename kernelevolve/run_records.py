"""Runs as stored records: creating one, persisting its nodes, closing it, and checking it can resume.

Each node is persisted atomically (artifacts first, then one DuckDB transaction), so a killed run loses
only what was in flight and ``resume`` needs nothing but the store. The loop itself is in ``orchestrator``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import structlog

from evaluators.identity import source_hash
from evaluators.result import EvaluationResult
from kernelevolve.errors import UserError
from kernelevolve.operators.base import Proposal
from kernelevolve.store import layout
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from kernelevolve.store.records import CaseRecord, RunRecord
from search.node import Node

log = structlog.get_logger("kernelevolve.run_records")


@dataclass
class SearchConfig:
    op: str
    spec_path: str
    hw: str
    strategy: str
    budget: int
    seed: int = 0
    operator: str = "offline"
    drafts: int = 3
    timeout_s: float = 120.0
    time_limit_s: float | None = None
    stall_after: int | None = None
    fitness_target: float | None = None
    simulate: bool = False
    concurrency: int = 1
    executor: str = "local"
    reuse: bool = True
    model: str | None = None
    max_cost: float | None = None
    code_roots: tuple[str, ...] = ()  # folders deep search greps besides the knowledge base (resolved paths)
    check_seeds: int | None = None  # random input seeds correctness is checked on (None: the evaluator's 3)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> SearchConfig:
        """The search settings out of a run's stored config, which also holds seeds, campaign and results."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in config.items() if k in names})


def create_run(store: MetadataStore, objects: ObjectStore, cfg: SearchConfig, spec_text: str,
               extra: dict[str, Any] | None = None) -> RunRecord:
    spec_hash = source_hash(spec_text)
    objects.put_text(layout.spec_key(spec_hash), spec_text)
    run = RunRecord(
        run_id=uuid.uuid4().hex[:8], op=cfg.op, op_path=cfg.spec_path, spec_hash=spec_hash, hw=cfg.hw,
        strategy=cfg.strategy, operator=cfg.operator, budget=cfg.budget, seed=cfg.seed,
        simulated=cfg.simulate, config={**asdict(cfg), **(extra or {})},
    )
    store.create_run(run)
    return run


def persist_node(store: MetadataStore, objects: ObjectStore, run: RunRecord, operator_name: str, node_id: int,
                 parent: Node | None, proposal: Proposal, digest: str, result: EvaluationResult,
                 also: Callable[[], None] | None = None,
                 overview: Callable[[Node], str] | None = None) -> Node:
    """Artifacts first, then the DuckDB row: the store never names an artifact that is missing.

    ``also`` runs more store writes in the node's transaction (one attachment instead of two)."""
    path_ref = objects.put_kernel(proposal.source)
    prefix = layout.node_prefix(run.run_id, node_id)
    objects.put_json(prefix + layout.EVALUATION, result.to_dict())
    objects.put_json(prefix + layout.OPERATOR, {"operator": operator_name, **proposal.meta})
    node = Node(
        run_id=run.run_id, node_id=node_id, parent_id=parent.node_id if parent else None,
        depth=(parent.depth + 1) if parent else 1, candidate_hash=digest, status=result.status,
        fitness=result.fitness, reason=result.reason, speedup_vs_eager=result.speedup_vs_eager,
        speedup_vs_compile=result.speedup_vs_compile, path_ref=path_ref,
        operator_meta={"operator": operator_name, **proposal.meta}, tokens_in=proposal.tokens_in,
        tokens_out=proposal.tokens_out, cost_usd=proposal.cost_usd, eval_seconds=result.eval_seconds,
        created_at=time.time(),
    )
    for name, text in proposal.artifacts.items():  # prompt and response of an LLM operator
        objects.put_text(prefix + name, text)
    if overview is not None:
        objects.put_text(prefix + layout.OVERVIEW, overview(node))
    cases = [CaseRecord(run.run_id, node_id, c.name, c.status, c.latency_ms, c.eager_ms, c.compile_ms,
                        c.max_abs_err, c.error) for c in result.cases]
    with store.batch():
        if also is not None:
            also()
        store.add_node(node, cases)
    return node


MAX_CASE_WINNERS = 4  # distinct per-case winners re-measured besides the overall best (bounds the extra time)


def finish_run(store: MetadataStore, objects: ObjectStore, run: RunRecord,
               evaluate: Callable[[str], EvaluationResult], reason: str) -> RunRecord:
    """Re-measure the winners in fresh evaluations and mark the run completed (docs/architecture.md §6): search-time
    numbers carry selection bias (the max of noisy samples), so the reported figures are new measurements.

    The winners are the overall best (fitness: the geomean over cases) and each case's fastest correct node,
    because deployment dispatches by shape: a kernel that wins the fp16 case but loses fp32 is still the one
    to ship for fp16. ``per_case`` in the stored summary names each case's winner by the fresh numbers.
    A run with a single correct node, or a simulated one (deterministic), keeps its nodes' own evaluations."""
    best = store.best_nodes(run.run_id, 2)
    config = run.config
    # With one correct node nothing was selected, and a simulation has no timing noise: either way there is
    # no bias to remove, and the nodes' own evaluations stand (an ATen sweep would otherwise time ops twice).
    if len(best) > 1 and best[0].speedup_vs_eager is not None and not run.simulated:
        candidates = [best[0].node_id] + sorted({n for n, _ in store.case_winners(run.run_id).values()}
                                                - {best[0].node_id})[:MAX_CASE_WINNERS]
        fresh: dict[int, EvaluationResult] = {}
        for node_id in candidates:
            node = store.get_node(run.run_id, node_id)
            assert node is not None
            result = evaluate(objects.get_text(node.path_ref))
            objects.put_json(layout.final_key(run.run_id, node_id, node_id == best[0].node_id),
                             {"node_id": node_id, **result.to_dict()})
            log.info("winner_remeasured", run_id=run.run_id, node_id=node_id, status=result.status,
                     search_fitness=node.fitness, fitness=result.fitness)
            fresh[node_id] = result
        head = fresh[best[0].node_id]
        config = {**config, "final": {"node_id": best[0].node_id, "status": head.status,
                                      "fitness": head.fitness, "speedup_vs_eager": head.speedup_vs_eager,
                                      "speedup_vs_compile": head.speedup_vs_compile,
                                      "per_case": per_case_winners(fresh)}}
    config = {**config, "stop_reason": reason}  # why it ended: budget, time, stall, max_cost or exhausted
    store.update_run(run.run_id, status="completed", best_node_id=best[0].node_id if best else None, config=config)
    log.info("run_finished", run_id=run.run_id, reason=reason, nodes=store.count_nodes(run.run_id))
    final = store.get_run(run.run_id)
    assert final is not None
    return final


def per_case_winners(results: dict[int, EvaluationResult]) -> dict[str, int]:
    """case -> node whose fresh measurement is fastest there, among those that stayed correct."""
    best: dict[str, tuple[float, int]] = {}
    for node_id, result in results.items():
        if result.status != "ok":
            continue
        for case in result.cases:
            if case.latency_ms and (case.name not in best or case.latency_ms < best[case.name][0]):
                best[case.name] = (case.latency_ms, node_id)
    return {case: node_id for case, (_, node_id) in sorted(best.items())}


def check_resumable(run: RunRecord, spec_text: str) -> None:
    if run.status == "completed":
        raise UserError(f"run {run.run_id} already completed ({run.budget} nodes); start a new run instead")
    if source_hash(spec_text) != run.spec_hash:
        raise UserError(f"spec {Path(run.op_path).name} changed since run {run.run_id} started; cannot resume")
