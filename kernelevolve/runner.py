"""The search loop (DESIGN §1): select, apply, score, persist, until a termination rule fires.

Each node is persisted atomically (artifacts first, then one DuckDB transaction), and every random
choice for node ``n`` comes from an RNG seeded with (run seed, n), so a killed run resumes exactly where
it stopped: ``resume`` needs nothing but the store.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import structlog

from evaluators import EVALUATOR_VERSION
from evaluators.identity import source_hash
from evaluators.result import EvaluationResult
from kernelevolve.errors import RunFailed, UserError
from kernelevolve.operators.base import Operator, OperatorError, ProposalContext
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from kernelevolve.store.records import CaseRecord, RunRecord
from search.node import Node
from search.policy import SelectionPolicy
from search.termination import Termination

log = structlog.get_logger("kernelevolve.runner")
ProgressFn = Callable[[Node, int, int, Node | None], None]


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


class StoreGraphView:
    """``search.GraphView`` over one run in the metadata store: every question is one SQL query."""

    def __init__(self, store: MetadataStore, run_id: str) -> None:
        self.store, self.run_id = store, run_id

    def count(self) -> int:
        return self.store.count_nodes(self.run_id)

    def best(self, k: int) -> list[Node]:
        return self.store.best_nodes(self.run_id, k)

    def nodes(self) -> list[Node]:
        return self.store.nodes(self.run_id)

    def children_counts(self) -> dict[int | None, int]:
        return self.store.children_counts(self.run_id)


def create_run(store: MetadataStore, objects: ObjectStore, cfg: SearchConfig, spec_text: str) -> RunRecord:
    spec_hash = source_hash(spec_text)
    objects.put_text(f"specs/{spec_hash}.py", spec_text)
    run = RunRecord(
        run_id=uuid.uuid4().hex[:8], op=cfg.op, op_path=cfg.spec_path, spec_hash=spec_hash, hw=cfg.hw,
        strategy=cfg.strategy, operator=cfg.operator, budget=cfg.budget, seed=cfg.seed,
        simulated=cfg.simulate, config=asdict(cfg),
    )
    store.create_run(run)
    return run


class SearchRunner:
    def __init__(self, store: MetadataStore, objects: ObjectStore, evaluate: Callable[[str, str], EvaluationResult],
                 operator: Operator, policy: SelectionPolicy, progress: ProgressFn | None = None) -> None:
        self.store, self.objects, self.evaluate = store, objects, evaluate
        self.operator, self.policy, self.progress = operator, policy, progress

    def run(self, run: RunRecord) -> RunRecord:
        cfg = SearchConfig(**run.config)
        view = StoreGraphView(self.store, run.run_id)
        rules = Termination(cfg.budget, cfg.time_limit_s, cfg.stall_after, cfg.fitness_target)
        seen = {n.candidate_hash for n in self.store.nodes(run.run_id)}
        started = time.monotonic()
        self.store.update_run(run.run_id, status="running")
        log.info("run_started", run_id=run.run_id, op=cfg.op, hw=cfg.hw, strategy=cfg.strategy, resumed=bool(seen))
        try:
            while (reason := rules.reason(view, time.monotonic() - started)) is None:
                self._step(run, cfg, view, seen)
        except KeyboardInterrupt:
            self.store.update_run(run.run_id, status="interrupted")
            raise
        except (OperatorError, RunFailed) as exc:
            self.store.update_run(run.run_id, status="failed", config={**run.config, "failure": str(exc)})
            log.error("run_failed", run_id=run.run_id, error=str(exc))
            raise RunFailed(str(exc)) from None
        best = view.best(1)
        final = self._remeasure(run, best[0]) if best and best[0].speedup_vs_eager is not None else None
        config = {**run.config, "final": final} if final else run.config
        self.store.update_run(run.run_id, status="completed", best_node_id=best[0].node_id if best else None,
                              config=config)
        log.info("run_finished", run_id=run.run_id, reason=reason, nodes=view.count())
        final = self.store.get_run(run.run_id)
        assert final is not None
        return final

    def _remeasure(self, run: RunRecord, best: Node) -> dict[str, Any]:
        """Time the winner again in a fresh evaluation before reporting it (DESIGN §4): search-time numbers
        carry selection bias (the max of noisy samples), so the reported figure is a new measurement."""
        result = self.evaluate(SearchConfig(**run.config).spec_path, self.objects.get_text(best.path_ref))
        self.objects.put_json(f"runs/{run.run_id}/final.json", {"node_id": best.node_id, **result.to_dict()})
        log.info("best_remeasured", run_id=run.run_id, node_id=best.node_id, status=result.status,
                 search_fitness=best.fitness, fitness=result.fitness)
        return {"node_id": best.node_id, "status": result.status, "fitness": result.fitness,
                "speedup_vs_eager": result.speedup_vs_eager, "speedup_vs_compile": result.speedup_vs_compile}

    def _step(self, run: RunRecord, cfg: SearchConfig, view: StoreGraphView, seen: set[str]) -> None:
        node_id = self.store.next_node_id(run.run_id)
        rng = random.Random(f"{run.seed}:{node_id}")
        parent = self.policy.select(view, rng)
        context = ProposalContext(op=cfg.op, target=cfg.hw, rng=rng, seen_hashes=seen,
                                  draft_index=view.children_counts().get(None, 0))
        if parent is not None:
            context.parent_source = self.objects.get_text(parent.path_ref)
            context.parent_result = EvaluationResult.from_dict(
                self.objects.get_json(ObjectStore.node_prefix(run.run_id, parent.node_id) + "evaluation.json"))
        proposal = self.operator.propose(parent, context)[0]
        digest = source_hash(proposal.source)
        cached = self.store.cached_evaluation(digest, run.spec_hash, cfg.hw, EVALUATOR_VERSION)
        if cached is not None:
            result = EvaluationResult.from_dict(cached)
            proposal.meta["cached_evaluation"] = True
        else:
            result = self.evaluate(cfg.spec_path, proposal.source)
            if result.status not in ("crash", "timeout"):  # those may be the host's fault: retry next time
                self.store.cache_evaluation(digest, run.spec_hash, cfg.hw, EVALUATOR_VERSION, result.to_dict())
        node = self._persist(run, node_id, parent, proposal, digest, result)
        seen.add(digest)
        best = view.best(1)
        log.info("node_evaluated", run_id=run.run_id, node_id=node_id, parent_id=node.parent_id,
                 status=node.status, fitness=node.fitness, reason=node.reason, seconds=result.eval_seconds)
        if self.progress:
            self.progress(node, view.count(), cfg.budget, best[0] if best else None)

    def _persist(self, run: RunRecord, node_id: int, parent: Node | None, proposal: Any, digest: str,
                 result: EvaluationResult) -> Node:
        """Artifacts first, then the DuckDB row: the store never names an artifact that is missing."""
        path_ref = self.objects.put_kernel(proposal.source)
        prefix = ObjectStore.node_prefix(run.run_id, node_id)
        self.objects.put_json(prefix + "evaluation.json", result.to_dict())
        self.objects.put_json(prefix + "operator.json", {"operator": self.operator.name, **proposal.meta})
        node = Node(
            run_id=run.run_id, node_id=node_id, parent_id=parent.node_id if parent else None,
            depth=(parent.depth + 1) if parent else 1, candidate_hash=digest, status=result.status,
            fitness=result.fitness, reason=result.reason, speedup_vs_eager=result.speedup_vs_eager,
            speedup_vs_compile=result.speedup_vs_compile, path_ref=path_ref,
            operator_meta={"operator": self.operator.name, **proposal.meta}, tokens_in=proposal.tokens_in,
            tokens_out=proposal.tokens_out, cost_usd=proposal.cost_usd, eval_seconds=result.eval_seconds,
            created_at=time.time(),
        )
        cases = [CaseRecord(run.run_id, node_id, c.name, c.status, c.latency_ms, c.eager_ms, c.compile_ms,
                            c.max_abs_err, c.error) for c in result.cases]
        self.store.add_node(node, cases)
        return node


def check_resumable(run: RunRecord, spec_text: str) -> None:
    if run.status == "completed":
        raise UserError(f"run {run.run_id} already completed ({run.budget} nodes); start a new run instead")
    if source_hash(spec_text) != run.spec_hash:
        raise UserError(f"spec {Path(run.op_path).name} changed since run {run.run_id} started; cannot resume")
