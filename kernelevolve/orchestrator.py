"""Keep K expansions in flight over one or more runs, and apply results as they arrive (docs/architecture.md §1, §9).

An expansion goes select -> generate -> evaluate -> persist. Selection and every store access happen on this
thread, in order, so the store never sees two writers from one process and the policies see a consistent
graph. Generation runs on a generation pool (threads, or Ray CPU tasks) and evaluation on the target's pool,
so the orchestrator is free to select and persist while both are busy.

Expansions still in flight are shown to the policies as *pending* children (a virtual loss): a pending node
counts towards its parent's children and the run's budget but is buggy-valued, so MCTS spreads concurrent
expansions over the tree instead of sending all K down the same path. With K = 1 nothing is ever pending and a
run is exactly the sequential loop: deterministic under its seed for a given executor.

Node ids are given when a result is persisted, so they stay dense whatever order results arrive in. Each
expansion's random choices come from an RNG seeded with (run seed, dispatch index); a killed run loses only
what was in flight, and ``resume`` redoes that work under the next dispatch indices.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any

import structlog

from evaluators import EVALUATOR_VERSION
from evaluators.identity import source_hash
from evaluators.result import EvaluationResult
from interpreters.pools import EvaluationRequest, HarnessFailure, PoolSet
from interpreters.spec_shelf import shelve
from interpreters.targets import get_target
from kernelevolve.errors import RunFailed
from kernelevolve.generation import GenerationPool, GenerationTask
from kernelevolve.memory import RunMemory, gather, overview_markdown
from kernelevolve.operators.base import OperatorError, Proposal, ProposalContext, SpaceExhausted
from kernelevolve.operators.llm import TransientOperatorError
from kernelevolve.run_records import SearchConfig, finish_run, persist_node
from kernelevolve.store import layout
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from kernelevolve.store.records import RunRecord
from kernelevolve.store.recovery import node_evaluation
from search.graph import ListGraphView
from search.node import Node
from search.policy import make_policy
from search.termination import Termination

log = structlog.get_logger("kernelevolve.orchestrator")
ProgressFn = Callable[[Node, int, int, Node | None], None]
MAX_REGENERATIONS = 3
MAX_TRANSIENT = 5
MAX_HARNESS = 3  # evaluator failures in a row (each after the pool's own restarts) before a run stops
SCREEN_FRACTION = 0.8  # screening skips full timing only when even an optimistic estimate is below 80% of the best


class RunGraph(ListGraphView):
    """One run's stored nodes, mirrored in memory by the run's only writer.

    Why not query DuckDB for every policy question: each store call attaches the file under a lock so that other
    processes can read and write it (about 9 ms on a 2-core host), and a step asks ~10 questions. A run is driven
    by one orchestrator at a time, so its nodes change only through ``add`` below, right after the store commits
    them; the mirror is loaded from the store on start and resume, and the store stays the source of truth
    (a second writer on the same run fails on the node's primary key instead of forking it). Cross-run questions
    (seeds, the evaluation cache, ``ke show``) still go to SQL.
    """

    def __init__(self, run_id: str, nodes: list[Node]) -> None:
        super().__init__(nodes)
        self.run_id = run_id

    def cost(self) -> float:
        return sum(n.cost_usd for n in self._nodes)


class PendingView:
    """The stored graph plus in-flight expansions as pending, value-0 children (see the module docstring)."""

    def __init__(self, base: RunGraph) -> None:
        self.base = base
        self.pending: dict[int, Node | None] = {}  # dispatch index -> parent

    def count(self) -> int:
        return self.base.count() + len(self.pending)

    def best(self, k: int) -> list[Node]:
        return self.base.best(k)

    def nodes(self) -> list[Node]:
        stored = self.base.nodes()
        phantoms = [Node(run_id=self.base.run_id, node_id=-index, parent_id=p.node_id if p else None,
                         depth=(p.depth + 1) if p else 1, candidate_hash="", status="pending", fitness=math.nan)
                    for index, p in sorted(self.pending.items())]
        return stored + phantoms

    def children_counts(self) -> dict[int | None, int]:
        counts = dict(self.base.children_counts())
        for parent in self.pending.values():
            key = parent.node_id if parent else None
            counts[key] = counts.get(key, 0) + 1
        return counts


@dataclass
class Expansion:
    driver: RunDriver
    index: int
    parent: Node | None
    task: GenerationTask | None = None
    memory: RunMemory | None = None
    proposal: Proposal | None = None
    digest: str = ""
    cached: bool = False
    meta: dict[str, Any] = field(default_factory=dict)



def cache_target(hw: str, simulate: bool, check_seeds: int | None = None) -> str:
    """``hw``, marked ``+sim`` for a simulated run: the two verdicts of one source differ in kind; and
    ``+seedsN`` for a run checking correctness on other than the default seeds, so that a verdict on fewer
    seeds never stands in for one on more."""
    return (f"{hw}+sim" if simulate else hw) + (f"+seeds{check_seeds}" if check_seeds else "")

class RunDriver:
    """One run's state inside the orchestrator: its policy, operator, termination rules and pending set."""

    def __init__(self, run: RunRecord, store: MetadataStore, objects: ObjectStore, operator: Any,
                 progress: ProgressFn | None = None) -> None:
        self.run, self.store, self.objects, self.operator, self.progress = run, store, objects, operator, progress
        self.cfg = SearchConfig.from_config(run.config)
        self.policy = make_policy(run.strategy, drafts=self.cfg.drafts)
        stored = store.nodes(run.run_id)
        self.graph = RunGraph(run.run_id, stored)
        self.view = PendingView(self.graph)
        self.rules = Termination(self.cfg.budget, self.cfg.time_limit_s, self.cfg.stall_after,
                                 self.cfg.fitness_target)
        self.spec_text = objects.get_text(layout.spec_key(run.spec_hash))  # read once per run
        self.spec = shelve(self.cfg.spec_path.rsplit("/", 1)[-1] or f"{run.op}.py", self.spec_text)
        self.vendor = get_target(run.hw).vendor
        self.transient_failures = 0
        self.harness_failures = 0  # nodes in a row the evaluator itself failed on (not stored, not charged)
        self.seen = {n.candidate_hash for n in stored}
        self.next_index = len(stored) + 1
        self.started = time.monotonic()
        self.stop_reason: str | None = None
        self.failure: str | None = None
        store.update_run(run.run_id, status="running")
        log.info("run_started", run_id=run.run_id, op=run.op, hw=run.hw, strategy=run.strategy,
                 resumed=bool(stored), nodes=len(stored))

    # ---- dispatch ---------------------------------------------------------------------------

    def can_dispatch(self) -> bool:
        if self.failure is not None or self.stop_reason is not None:
            return False
        if self.cfg.max_cost is not None and self.graph.cost() >= self.cfg.max_cost:
            self.stop_reason = "max_cost"
            return False
        reason = self.rules.reason(self.view, time.monotonic() - self.started)
        if reason is not None:
            self.stop_reason = reason
            return False
        return True

    @property
    def finished(self) -> bool:
        return not self.view.pending and not self.can_dispatch()

    def prepare(self) -> tuple[Expansion, GenerationTask]:
        index = self.next_index
        self.next_index += 1
        rng = random.Random(f"{self.run.seed}:{index}")
        second = None
        if getattr(self.operator, "supports_crossover", False) and hasattr(self.policy, "select_parents"):
            parent, second = self.policy.select_parents(self.view, rng)
        else:
            parent = self.policy.select(self.view, rng)
        context = ProposalContext(op=self.cfg.op, target=self.cfg.hw, rng=rng, seen_hashes=set(self.seen),
                                  draft_index=self.view.children_counts().get(None, 0))
        if parent is not None:
            context.parent_source = self.objects.get_text(parent.path_ref)
            context.parent_result = EvaluationResult.from_dict(  # rebuilt from DuckDB if its artifact is lost
                node_evaluation(self.store, self.objects, self.run, parent))
        if second is not None:
            context.second_parent, context.second_parent_source = second, self.objects.get_text(second.path_ref)
        exp = Expansion(self, index, parent)
        context.spec_source = self.spec_text  # the offline operator lowers it when the op has no samples
        if getattr(self.operator, "wants_memory", False):  # read DuckDB here, on the orchestrator thread
            context.memory = exp.memory = gather(self.store, self.objects, self.run.run_id, parent,
                                                 context.parent_result)
            context.vendor = self.vendor
        self.view.pending[index] = parent
        exp.task = GenerationTask(self.operator, parent, context)
        return exp, exp.task

    def regenerate(self, exp: Expansion, task: GenerationTask) -> GenerationTask | None:
        """A task to run again when a concurrent expansion already proposed the same source, else None.

        Concurrent generations cannot see each other's proposals, so two may coincide; the second is sent
        back with the up-to-date seen set (its RNG has moved on) rather than evaluating one kernel twice.
        Only for operators that honour the seen set and cost nothing to ask again: an LLM's repeat is kept (it
        costs one node and is served from the evaluation cache) rather than paid for a second time."""
        assert exp.proposal is not None
        exp.digest = source_hash(exp.proposal.source)
        if getattr(self.operator, "wants_memory", False):
            return None
        if exp.digest not in self.seen or exp.meta.get("regenerated", 0) >= MAX_REGENERATIONS:
            return None
        exp.meta["regenerated"] = exp.meta.get("regenerated", 0) + 1
        task.context.seen_hashes = set(self.seen)
        return task

    def request(self, exp: Expansion) -> EvaluationRequest | None:
        """After generation: the evaluation to run, or None when the cache already has the result."""
        assert exp.proposal is not None
        exp.digest = source_hash(exp.proposal.source)
        self.seen.add(exp.digest)
        cached = self.store.cached_evaluation(exp.digest, self.run.spec_hash, self.cache_target, EVALUATOR_VERSION)
        if cached is not None:
            exp.cached = True
            exp.meta["cached_result"] = cached
            return None
        return EvaluationRequest(self.cfg.hw, self.cfg.simulate, self.spec, exp.proposal.source, self.cfg.timeout_s,
                                 screen_below=self.screen_bar(), check_seeds=self.cfg.check_seeds)

    @property
    def cache_target(self) -> str:
        """The evaluation cache's target key: a simulated h100 result must never stand in for a measured one."""
        return cache_target(self.cfg.hw, bool(self.cfg.simulate), self.cfg.check_seeds)

    def screen_bar(self) -> float | None:
        """The fitness a search node must plausibly reach to earn a full timing: SCREEN_FRACTION of the run's
        best timed fitness so far (None before any node was timed, so the first nodes are timed in full)."""
        best = self.graph.best(1)
        if not best or not best[0].fitness or best[0].speedup_vs_eager is None:
            return None
        return SCREEN_FRACTION * best[0].fitness

    def apply(self, exp: Expansion, result: EvaluationResult) -> Node:
        assert exp.proposal is not None
        remember = None
        if exp.cached:
            exp.proposal.meta["cached_evaluation"] = True
        elif result.status not in ("crash", "timeout", "too_large"):  # the host's fault, maybe: retry next time
            def remember() -> None:
                self.store.cache_evaluation(exp.digest, self.run.spec_hash, self.cache_target, EVALUATOR_VERSION,
                                            result.to_dict())
        node_id = self.graph.count() + 1
        analysis = str(exp.proposal.meta.get("analysis") or "")
        self.transient_failures = self.harness_failures = 0
        node = persist_node(self.store, self.objects, self.run, self.operator.name, node_id, exp.parent,
                            exp.proposal, exp.digest, result, also=remember,
                            overview=lambda n: overview_markdown(n, result, exp.memory, analysis))
        self.graph.add(node)
        del self.view.pending[exp.index]
        if result.status == "too_large" and self.failure is None:  # every later node would be too: stop here
            self.failure = f"the problem does not fit this device, so no kernel was judged: {result.reason}"
        best = self.view.best(1)
        log.info("node_evaluated", run_id=self.run.run_id, node_id=node_id, parent_id=node.parent_id,
                 status=node.status, fitness=node.fitness, reason=node.reason, seconds=result.eval_seconds)
        if self.progress:
            self.progress(node, self.view.base.count(), self.cfg.budget, best[0] if best else None)
        return node

    def transient(self, exp: Expansion, error: str) -> None:
        """The operator's API failed after its own retries: drop this expansion (it is redone by the next
        dispatch); after ``MAX_TRANSIENT`` failures in a row the run stops, resumable."""
        self.view.pending.pop(exp.index, None)
        self.transient_failures += 1
        log.warning("operator_unavailable", run_id=self.run.run_id, error=error, in_a_row=self.transient_failures)
        if self.transient_failures >= MAX_TRANSIENT:
            self.failure = f"operator failed {self.transient_failures} times in a row, last: {error}"

    def harness_failed(self, exp: Expansion, error: str) -> None:
        """The evaluator (not the candidate) failed on this node after the pool's restarts and retries: the
        node is dropped unstored, so no budget is spent on it; after ``MAX_HARNESS`` in a row the run stops as
        failed with that one line, resumable once the host is fixed."""
        self.view.pending.pop(exp.index, None)
        self.harness_failures += 1
        log.error("evaluator_failed", run_id=self.run.run_id, error=error, in_a_row=self.harness_failures)
        if self.harness_failures >= MAX_HARNESS:
            self.failure = f"the evaluator failed on {self.harness_failures} nodes in a row (not the kernels' " \
                           f"fault; the budget is not spent, resume when fixed): {error}"

    def exhausted(self, exp: Expansion, error: str) -> None:
        """The operator has nothing new left: stop dispatching and let the nodes in flight finish; the run
        ends normally with stop reason 'exhausted', or fails if it holds no node at all."""
        self.view.pending.pop(exp.index, None)
        if self.view.base.count() or self.view.pending:
            self.stop_reason = self.stop_reason or "exhausted"
            log.info("search_exhausted", run_id=self.run.run_id, nodes=self.view.base.count(), detail=error)
        else:
            self.failure = error

    def abandon(self, exp: Expansion, error: str) -> None:
        """The operator could not produce a candidate: the run fails (its stored nodes stay)."""
        self.view.pending.pop(exp.index, None)
        self.failure = error


class Orchestrator:
    """Fills ``concurrency`` expansion slots round-robin from the runs that still want work."""

    def __init__(self, pools: PoolSet, generation: GenerationPool, concurrency: int = 1) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.pools, self.generation, self.concurrency = pools, generation, concurrency

    def run(self, drivers: list[RunDriver], on_finish: Callable[[RunDriver], None] | None = None) -> None:
        inflight: dict[Future, tuple[str, Expansion]] = {}
        active = list(drivers)
        turn = 0
        try:
            while True:
                turn = self._fill(active, inflight, turn)
                if not inflight:
                    break
                done, _ = wait(list(inflight), timeout=5.0, return_when=FIRST_COMPLETED)
                for future in done:
                    stage, exp = inflight.pop(future)
                    self._advance(stage, exp, future, inflight)
                for d in [d for d in active if d.finished]:
                    active.remove(d)
                    if on_finish:
                        on_finish(d)
            for d in active:
                if on_finish:
                    on_finish(d)
        except BaseException:
            for future in inflight:
                future.cancel()
            raise

    def _fill(self, active: list[RunDriver], inflight: dict[Future, tuple[str, Expansion]], turn: int) -> int:
        idle_rounds = 0
        while len(inflight) < self.concurrency and active and idle_rounds < len(active):
            driver = active[turn % len(active)]
            turn += 1
            if not driver.can_dispatch():
                idle_rounds += 1
                continue
            idle_rounds = 0
            exp, task = driver.prepare()
            inflight[self.generation.submit(task)] = ("generate", exp)
        return turn

    def _advance(self, stage: str, exp: Expansion, future: Future, inflight: dict) -> None:
        driver = exp.driver
        if stage == "generate":
            try:
                exp.proposal = future.result()
            except TransientOperatorError as exc:
                driver.transient(exp, str(getattr(exc, "cause", None) or exc))
                return
            except SpaceExhausted as exc:
                driver.exhausted(exp, str(getattr(exc, "cause", None) or exc))
                return
            except OperatorError as exc:
                message = str(getattr(exc, "cause", None) or exc)  # a Ray task error wraps the original
                driver.abandon(exp, message)
                log.error("operator_failed", run_id=driver.run.run_id, error=message)
                return
            assert exp.task is not None
            again = driver.regenerate(exp, exp.task)
            if again is not None:
                inflight[self.generation.submit(again)] = ("generate", exp)
                return
            request = driver.request(exp)
            if request is None:
                driver.apply(exp, EvaluationResult.from_dict(exp.meta.pop("cached_result")))
                return
            inflight[self.pools.submit(request)] = ("evaluate", exp)
            return
        try:
            result = future.result()
        except HarnessFailure as exc:
            driver.harness_failed(exp, str(exc))
            return
        driver.apply(exp, result)


def complete(driver: RunDriver, pools: PoolSet) -> RunRecord:
    """Close a run: failed if its operator failed, else re-measure the winner and mark it completed."""
    run = driver.run
    if driver.failure is not None:
        driver.store.update_run(run.run_id, status="failed", config={**run.config, "failure": driver.failure})
        raise RunFailed(driver.failure)

    def evaluate(source: str) -> EvaluationResult:
        return pools.evaluate(EvaluationRequest(driver.cfg.hw, driver.cfg.simulate, driver.spec, source,
                                                driver.cfg.timeout_s, final=True, check_seeds=driver.cfg.check_seeds))

    return finish_run(driver.store, driver.objects, run, evaluate, driver.stop_reason or "budget")
