"""What the orchestrator itself costs per node, separated from evaluation (issue #5).

1. Search loop: a real run (offline operator, policies, DuckDB store, local object store) whose evaluations
   return instantly, so the wall time per node is pure orchestration: selection (SQL views), generation,
   the cache lookup, artifact writes and the node's DuckDB transaction. Per strategy, at K=1 and K=4.
2. Ray: the round trip of a no-op call to an evaluation-style actor holding ``hw:cpu``, and of a no-op
   generation task, on a private local Ray cluster. This is what ``--executor ray`` adds per evaluation.

Medians and spreads over repetitions; compare with the 1-30 s an evaluation takes.

    python benchmarks/orchestrator_overhead.py --budget 200 --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.result import EvaluationResult  # noqa: E402
from interpreters.pools import EvaluationRequest, PoolSet, SlotPool  # noqa: E402
from interpreters.spec_shelf import shelve  # noqa: E402
from kernelevolve.generation import ThreadGeneration  # noqa: E402
from kernelevolve.orchestrator import Orchestrator, RunDriver  # noqa: E402
from kernelevolve.run_records import SearchConfig  # noqa: E402
from kernelevolve.run_setup import make_operator, new_run  # noqa: E402
from kernelevolve.store.metadata import MetadataStore  # noqa: E402
from kernelevolve.store.objects import ObjectStore  # noqa: E402

RESULTS = Path(os.environ.get("KE_RESULTS_DIR", ROOT / "benchmarks" / "results")) / "orchestrator_overhead"
SPEC = ROOT / "kernelevolve" / "builtin_specs" / "softmax.py"


class InstantSlot:
    """Answers at once with a fitness derived from the source, so the policies see a varied landscape."""

    def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        fitness = 0.5 + int(hashlib.sha256(request.source.encode()).hexdigest()[:4], 16) / 0xFFFF
        return EvaluationResult(status="ok", fitness=fitness, speedup_vs_eager=fitness, target=request.target)

    def close(self) -> None:
        pass


def time_loop(strategy: str, budget: int, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        meta = MetadataStore(Path(tmp) / "ke.duckdb")
        objects = ObjectStore(str(Path(tmp) / "artifacts"))
        cfg = SearchConfig(op="softmax", spec_path=str(SPEC), hw="cpu", strategy=strategy, budget=budget)
        run = new_run(meta, objects, cfg, SPEC.read_text(), reuse=False)
        pools = PoolSet(lambda target, simulate: SlotPool(InstantSlot, concurrency, name=target))
        driver = RunDriver(run, meta, objects, make_operator(run, objects))
        started = time.perf_counter()
        Orchestrator(pools, ThreadGeneration(concurrency), concurrency).run([driver])
        elapsed = time.perf_counter() - started
        assert meta.count_nodes(run.run_id) == budget
        pools.close()
        return elapsed / budget * 1000


def summarise(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"median": round(statistics.median(ordered), 3), "min": round(ordered[0], 3),
            "max": round(ordered[-1], 3), "n": len(ordered)}


def ray_round_trips(calls: int) -> dict:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(resources={"hw:cpu": 1}, include_dashboard=False, log_to_driver=False)

    @ray.remote(num_cpus=0, resources={"hw:cpu": 1})
    class Echo:
        def evaluate(self, request: EvaluationRequest) -> dict:
            return {"status": "ok", "target": request.target}

    @ray.remote(num_cpus=1)
    def generate(x: int) -> int:
        return x

    actor = Echo.remote()
    request = EvaluationRequest("cpu", False, shelve("softmax.py", SPEC.read_text()), SPEC.read_text())
    ray.get(actor.evaluate.remote(request))
    ray.get(generate.remote(0))
    actor_ms, task_ms = [], []
    for i in range(calls):
        t0 = time.perf_counter()
        ray.get(actor.evaluate.remote(request))
        actor_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        ray.get(generate.remote(i))
        task_ms.append((time.perf_counter() - t0) * 1000)
    ray.shutdown()
    return {"actor_call_ms": summarise(actor_ms), "generation_task_ms": summarise(task_ms)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ray-calls", type=int, default=200)
    parser.add_argument("--strategies", nargs="+", default=["greedy", "mcts", "evolutionary", "random"])
    args = parser.parse_args()
    loop: dict[str, dict] = {}
    for strategy in args.strategies:
        for k in (1, 4):
            samples = [time_loop(strategy, args.budget, k) for _ in range(args.repeats)]
            loop[f"{strategy} K={k}"] = summarise(samples)
            print(f"{strategy:12} K={k}: {loop[f'{strategy} K={k}']}", file=sys.stderr)
    result = {
        "budget": args.budget, "repeats": args.repeats, "ms_per_node": loop,
        "ray": ray_round_trips(args.ray_calls) if importlib.util.find_spec("ray") else None,
        "date": date.today().isoformat(), "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, CPU only",
        "command": "python benchmarks/orchestrator_overhead.py " + " ".join(sys.argv[1:]),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "orchestrator_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Orchestrator overhead per node", "",
             f"{result['date']}, {result['machine']}, Python {result['python']}. Command: `{result['command']}`", "",
             f"Search loop with instant evaluations, {args.budget}-node runs, {args.repeats} repeats "
             "(ms per node: median, min..max):", "", "| strategy | ms/node median | min..max |", "|---|---|---|"]
    for name, s in loop.items():
        lines.append(f"| {name} | {s['median']} | {s['min']}..{s['max']} |")
    if result["ray"] is None:
        lines += ["", "Ray is not installed on this host: no Ray round trips measured.", ""]
    else:
        actor, task = result["ray"]["actor_call_ms"], result["ray"]["generation_task_ms"]
        lines += ["", f"Ray, private local cluster, {args.ray_calls} calls: actor round trip median "
                  f"{actor['median']} ms "
                  f"({actor['min']}..{actor['max']}), generation task median {task['median']} ms "
                  f"({task['min']}..{task['max']}).", ""]
    (RESULTS / "orchestrator_overhead.md").write_text("\n".join(lines) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
