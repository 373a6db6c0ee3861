"""The orchestrator on real stores (DuckDB file, local object store) and the real offline operator, with a
*scoring* slot in place of a GPU: fitness is a fixed function of the candidate's source, so what is tested
is scheduling (concurrency, virtual loss, dense ids, determinism, retries, seeding), not kernels."""

from __future__ import annotations

import hashlib
import random
import threading
import time
from pathlib import Path

import pytest
from helpers.store_checks import assert_store_consistent

from evaluators.result import EvaluationResult
from interpreters.pools import EvaluationRequest, PoolSet, SlotLost, SlotPool
from interpreters.spec_shelf import SpecRef
from kernelevolve.generation import ThreadGeneration
from kernelevolve.operators.offline import OfflineOperator
from kernelevolve.operators.seeded import SeededOperator
from kernelevolve.orchestrator import Orchestrator, PendingView, RunDriver, complete
from kernelevolve.run_records import SearchConfig
from kernelevolve.run_setup import make_operator, new_run
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from search.graph import ListGraphView
from search.mcts import MCTSPolicy
from search.node import Node

SPEC = Path(__file__).resolve().parent.parent / "kernelevolve" / "builtin_specs" / "swish.py"


def score(source: str) -> float:
    return 0.5 + int(hashlib.sha256(source.encode()).hexdigest()[:6], 16) / 0xFFFFFF


class ScoringSlot:
    """Scores by source hash after a short sleep, and records how many evaluations overlap.

    With ``want`` set, an evaluation waits (up to 10 s) until ``want`` are in flight, until that has happened
    once: on a loaded 2-core machine a fixed sleep alone let the first evaluation finish before the last
    one was generated, so "K in flight" failed for timing, not for the orchestrator. An orchestrator that
    never submits K at once still fails: the wait times out and the peak stays below K."""

    active = 0
    peak = 0
    want = 0
    lock = threading.Condition()

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay

    def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        with ScoringSlot.lock:
            ScoringSlot.active += 1
            ScoringSlot.peak = max(ScoringSlot.peak, ScoringSlot.active)
            ScoringSlot.lock.notify_all()
            ScoringSlot.lock.wait_for(lambda: ScoringSlot.peak >= ScoringSlot.want, timeout=10)
        time.sleep(self.delay)
        with ScoringSlot.lock:
            ScoringSlot.active -= 1
        return EvaluationResult(status="ok", fitness=score(request.source), target=request.target,
                                speedup_vs_eager=score(request.source))

    def close(self) -> None:
        pass


def scoring_pools(size: int) -> PoolSet:
    return PoolSet(lambda target, simulate: SlotPool(ScoringSlot, size, name=target))


def start_run(tmp_path: Path, strategy: str, budget: int, seed: int = 0, reuse: bool = False, concurrency: int = 1):
    meta = MetadataStore(tmp_path / "ke.duckdb")
    objects = ObjectStore(str(tmp_path / "artifacts"))
    cfg = SearchConfig(op="swish", spec_path=str(SPEC), hw="cpu", strategy=strategy, budget=budget, seed=seed,
                       concurrency=concurrency)
    return meta, objects, new_run(meta, objects, cfg, SPEC.read_text(), reuse=reuse)


def drive(meta, objects, runs, concurrency: int):
    pools = scoring_pools(concurrency)
    drivers = [RunDriver(r, meta, objects, make_operator(r, objects)) for r in runs]
    done = []
    Orchestrator(pools, ThreadGeneration(concurrency), concurrency).run(drivers, lambda d: done.append(
        complete(d, pools)))
    return done


def shape(meta: MetadataStore, run_id: str) -> list[tuple]:
    return [(n.node_id, n.parent_id, n.candidate_hash) for n in meta.nodes(run_id)]


@pytest.mark.parametrize("strategy", ["greedy", "mcts", "evolutionary", "random"])
def test_concurrency_one_is_deterministic_under_the_seed(tmp_path: Path, strategy: str) -> None:
    shapes = []
    for attempt in range(2):
        meta, objects, run = start_run(tmp_path / str(attempt), strategy, budget=10, seed=7)
        drive(meta, objects, [run], 1)
        shapes.append(shape(meta, run.run_id))
    assert shapes[0] == shapes[1]
    assert len(shapes[0]) == 10


def test_k_expansions_overlap_and_ids_stay_dense(tmp_path: Path) -> None:
    ScoringSlot.peak, ScoringSlot.want = 0, 4
    try:
        meta, objects, run = start_run(tmp_path, "mcts", budget=16, concurrency=4)
        (final,) = drive(meta, objects, [run], 4)
    finally:
        ScoringSlot.want = 0
    assert final.status == "completed"
    assert ScoringSlot.peak == 4, "four evaluations should have been in flight at once"
    assert_store_consistent(tmp_path, str(tmp_path / "artifacts"), run.run_id, 16)


def test_several_runs_share_the_pools(tmp_path: Path) -> None:
    meta, objects, first = start_run(tmp_path, "greedy", budget=6)
    cfg = SearchConfig(op="swish", spec_path=str(SPEC), hw="mtia-v3", strategy="random", budget=5, simulate=True)
    second = new_run(meta, objects, cfg, SPEC.read_text(), reuse=False)
    finished = drive(meta, objects, [first, second], 3)
    assert {r.run_id for r in finished} == {first.run_id, second.run_id}
    assert meta.count_nodes(first.run_id) == 6 and meta.count_nodes(second.run_id) == 5


def test_pending_expansions_are_virtual_losses_for_mcts() -> None:
    """With its best child's subtree busy, MCTS must send the next expansion elsewhere."""
    nodes = [Node("r", 1, None, 1, "a", "ok", 2.0), Node("r", 2, None, 1, "b", "ok", 1.0),
             Node("r", 3, None, 1, "c", "ok", 1.0), Node("r", 4, 1, 2, "d", "ok", 2.0)]
    base = ListGraphView(nodes)
    base.run_id = "r"
    view = PendingView(base)  # type: ignore[arg-type]
    policy = MCTSPolicy(drafts=3, exploration=0.5)
    first = policy.select(view, random.Random(0))
    assert first is not None and first.node_id in (1, 4)
    for index in range(10, 16):
        view.pending[index] = first
    again = policy.select(view, random.Random(0))
    assert again is None or again.node_id not in (first.node_id,), "pending children must lower the value"
    assert view.count() == 4 + 6 and view.children_counts()[first.node_id] >= 6


def test_a_lost_slot_is_replaced_and_the_request_retried() -> None:
    made = []

    class DiesOnce(ScoringSlot):
        def evaluate(self, request):
            if len(made) == 1:
                raise SlotLost("ActorDiedError on node-2")
            return super().evaluate(request)

    def make():
        made.append(1)
        return DiesOnce(0.0)

    lost = []
    pool = SlotPool(make, 1, on_lost=lambda name, error: lost.append(error))
    result = pool.submit(EvaluationRequest("cpu", False, SpecRef("swish.py", ""), "source")).result()
    assert result.status == "ok" and len(made) == 2 and lost == ["ActorDiedError on node-2"]


def test_a_slot_that_keeps_dying_ends_as_a_crash_not_an_exception() -> None:
    class AlwaysDies(ScoringSlot):
        def evaluate(self, request):
            raise SlotLost("NodeDiedError")

    pool = SlotPool(AlwaysDies, 2, retries=2)
    result = pool.submit(EvaluationRequest("cpu", False, SpecRef("swish.py", ""), "source")).result()
    assert result.status == "crash" and "lost 3 times" in result.reason


class _Remembering:  # an operator that asks for the run's memory, as the LLM operator does
    name, wants_memory = "remembering", True


def test_new_run_seeds_from_the_best_stored_kernels_of_the_op(tmp_path: Path) -> None:
    meta, objects, first = start_run(tmp_path, "greedy", budget=8)
    drive(meta, objects, [first], 2)
    best = meta.best_nodes(first.run_id, 2)
    cfg = SearchConfig(op="swish", spec_path=str(SPEC), hw="mtia-v3", strategy="greedy", budget=4, simulate=True)
    second = new_run(meta, objects, cfg, SPEC.read_text(), reuse=True)
    seeds = second.config["seeded_from"]
    assert [(s["run_id"], s["node_id"]) for s in seeds[:2]] == [(first.run_id, n.node_id) for n in best]
    seeded = make_operator(second, objects)
    assert isinstance(seeded, SeededOperator)
    assert seeded.supports_crossover is True  # what the orchestrator asks passes through to the inner operator
    assert seeded.wants_memory is False and SeededOperator(_Remembering(), [], []).wants_memory is True
    drive(meta, objects, [second], 1)
    drafts = [n for n in meta.nodes(second.run_id) if n.parent_id is None]
    reused = {n.candidate_hash for n in drafts if n.operator_meta.get("seeded_from")}
    assert {n.candidate_hash for n in best} <= reused, "the best stored kernels were not re-evaluated as drafts"
    unseeded = new_run(meta, objects, cfg, SPEC.read_text(), reuse=False)
    assert unseeded.config["seeded_from"] == []
    assert isinstance(make_operator(unseeded, objects), OfflineOperator)


def test_evolutionary_runs_cross_two_parents(tmp_path: Path) -> None:
    meta, objects, run = start_run(tmp_path, "evolutionary", budget=30, seed=3)
    drive(meta, objects, [run], 1)
    nodes = {n.node_id: n for n in meta.nodes(run.run_id)}
    crossed = [n for n in nodes.values() if n.operator_meta.get("kind") == "crossover"]
    assert crossed, "with crossover_rate 0.3 over ~27 expansions some children must have two parents"
    for child in crossed:
        second = nodes[child.operator_meta["second_parent_id"]]
        assert second.node_id != child.parent_id and second.node_id < child.node_id
        first_src = objects.get_text(nodes[child.parent_id].path_ref)
        child_src = objects.get_text(child.path_ref)
        second_src = objects.get_text(second.path_ref)
        for name, (old, new) in child.operator_meta["changes"].items():
            assert f"{name} = {old}" in first_src and f"{name} = {new}" in second_src and f"{name} = {new}" in child_src


def test_crossover_needs_one_skeleton() -> None:
    from kernelevolve.operators.offline import crossover

    a = SPEC.parent.parent.parent / "knowledge_base" / "code_samples" / "softmax.py"
    base = a.read_text()
    left = base.replace("NUM_WARPS = 4", "NUM_WARPS = 8")
    right = base.replace("ROWS_PER_PROGRAM = 1", "ROWS_PER_PROGRAM = 2")
    child = crossover(left, right, random.Random(1), set())
    assert child is not None and child.meta["kind"] == "crossover"
    assert child.source in (base.replace("NUM_WARPS = 4", "NUM_WARPS = 8").replace("ROWS_PER_PROGRAM = 1",
                                                                                     "ROWS_PER_PROGRAM = 2"), base)
    looped = (a.parent / "softmax_looped.py").read_text()
    assert crossover(left, looped, random.Random(1), set()) is None, "different kernels are not crossed"
    assert crossover(left, left, random.Random(1), set()) is None


def test_an_exhausted_variant_space_ends_the_run_normally_not_as_a_failure(tmp_path: Path) -> None:
    """An offline operator whose one sample has no tunable and no rewrite can give the draft and nothing
    else: the run must end 'completed' with that node and stop reason 'exhausted', not fail or hang."""
    from kernelevolve.knowledge.samples import CodeSample

    source = SPEC.read_text()  # a spec as a 'kernel': what is scored here is scheduling, not the code
    sample = CodeSample(path=tmp_path / "only.py", op="swish", title="only", source=source)
    meta, objects, run = start_run(tmp_path, "greedy", budget=6, concurrency=2)
    pools = scoring_pools(2)
    driver = RunDriver(run, meta, objects, OfflineOperator([sample]))
    done: list = []
    Orchestrator(pools, ThreadGeneration(2), 2).run([driver], lambda d: done.append(complete(d, pools)))
    (final,) = done
    assert final.status == "completed"
    assert final.config["stop_reason"] == "exhausted"
    assert 1 <= meta.count_nodes(run.run_id) < 6
