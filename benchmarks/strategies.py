"""How many evaluations each selection policy needs to reach 95% of the best fitness found (issue #5).

Every (strategy, seed) is a real run of the real search (offline operator, orchestrator, DuckDB store) on a
simulated target, so fitness is the simulator's estimate against modelled eager PyTorch: a ranking signal,
not a measured speedup. All runs share one state directory, so a kernel proposed by several runs is
simulated once (the evaluation cache is keyed by source, spec, target and evaluator version); each run still
counts it as one of its evaluations, exactly as a search would.

Runs are scheduled side by side on one pool (``--workers`` slots) but each run has at most one expansion in
flight, so every run behaves exactly as a sequential search under its seed (its trajectory does not depend
on the others). Cross-run seeding is off: each run starts from the knowledge base, as on a fresh store.

    python benchmarks/strategies.py run --op conv1d --hw mi350 --budget 30 --seeds 5 --workers 2
    python benchmarks/strategies.py report      # re-analyse the stored runs without evaluating anything
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interpreters.pools import local_pools  # noqa: E402
from interpreters.targets import get_target  # noqa: E402
from kernelevolve.builtin_specs import resolve_op  # noqa: E402
from kernelevolve.generation import ThreadGeneration  # noqa: E402
from kernelevolve.orchestrator import Orchestrator, RunDriver, complete  # noqa: E402
from kernelevolve.run_records import SearchConfig  # noqa: E402
from kernelevolve.run_setup import make_operator, new_run  # noqa: E402
from kernelevolve.store.metadata import MetadataStore  # noqa: E402
from kernelevolve.store.objects import ObjectStore  # noqa: E402
from search.policy import STRATEGIES  # noqa: E402

RESULTS = Path(os.environ.get("KE_RESULTS_DIR", ROOT / "benchmarks" / "results")) / "strategies"
THRESHOLD = 0.95


class OneAtATime(RunDriver):
    """A run that never has more than one expansion in flight: sequential semantics on a shared pool."""

    def can_dispatch(self) -> bool:
        return not self.view.pending and super().can_dispatch()


def run_all(args: argparse.Namespace) -> None:
    state = Path(args.state)
    meta = MetadataStore(state / "ke.duckdb")
    objects = ObjectStore(str(state / "artifacts"))
    spec_path = resolve_op(args.op)
    target = get_target(args.hw)
    existing = {(r.strategy, r.seed): r for r in meta.list_runs() if r.op == args.op and r.hw == target.name}
    runs = []
    for strategy in args.strategies:
        for seed in range(args.seeds):
            run = existing.get((strategy, seed))
            if run is None:
                cfg = SearchConfig(op=args.op, spec_path=str(spec_path), hw=target.name, strategy=strategy,
                                   budget=args.budget, seed=seed, simulate=True, reuse=False)
                run = new_run(meta, objects, cfg, spec_path.read_text(), reuse=False)
            if run.status != "completed":
                runs.append(run)
    pools = local_pools(state / "scratch", args.workers)
    drivers = [OneAtATime(r, meta, objects, make_operator(r, objects)) for r in runs]
    started = time.monotonic()

    def finished(driver: RunDriver) -> None:
        complete(driver, pools)
        print(f"[{time.monotonic() - started:7.0f} s] {driver.run.strategy:12} seed {driver.run.seed} done",
              file=sys.stderr, flush=True)

    try:
        Orchestrator(pools, ThreadGeneration(args.workers), args.workers).run(drivers, finished)
    finally:
        pools.close()
    print(f"{len(runs)} runs in {time.monotonic() - started:.0f} s", file=sys.stderr)


def evaluations_to_reach(fitnesses: list[float], goal: float) -> int | None:
    best = 0.0
    for i, f in enumerate(fitnesses, start=1):
        best = max(best, f)
        if best >= goal:
            return i
    return None


def report(args: argparse.Namespace) -> dict:
    meta = MetadataStore(Path(args.state) / "ke.duckdb")
    runs = [r for r in meta.list_runs() if r.op == args.op and r.hw == args.hw]
    incomplete = sum(r.status != "completed" for r in runs)  # reported: such a run is censored at its length
    curves: dict[str, dict[int, list[float]]] = {}
    budgets: dict[str, int] = {}
    cache_hits = total = 0
    for r in runs:
        nodes = meta.nodes(r.run_id)
        curves.setdefault(r.strategy, {})[r.seed] = [0.0 if n.is_buggy else n.fitness for n in nodes]
        budgets[r.strategy] = max(budgets.get(r.strategy, 0), r.budget)
        cache_hits += sum(bool(n.operator_meta.get("cached_evaluation")) for n in nodes)
        total += len(nodes)
    best_found = max(max(c) for per in curves.values() for c in per.values())
    goal = THRESHOLD * best_found
    rows = {}
    for strategy in sorted(curves, key=lambda s: STRATEGIES.index(s) if s in STRATEGIES else 99):
        per_seed = curves[strategy]
        reached = {seed: evaluations_to_reach(c, goal) for seed, c in per_seed.items()}
        hits = sorted(v for v in reached.values() if v is not None)
        budget = budgets[strategy]
        censored = [v if v is not None else budget + 1 for v in reached.values()]  # "not within budget" ranks last
        finals = [max(c) for c in per_seed.values()]
        rows[strategy] = {
            "seeds": len(per_seed), "budget": budget, "reached": len(hits),
            "evals_to_95_median": statistics.median(censored),
            "evals_to_95_min": min(censored), "evals_to_95_max": max(censored),
            "evals_to_95_by_seed": {str(k): v for k, v in sorted(reached.items())},
            "final_best_median": round(statistics.median(finals), 4),
            "final_best_min": round(min(finals), 4), "final_best_max": round(max(finals), 4),
        }
    return {"op": args.op, "hw": args.hw, "simulated": True, "threshold": THRESHOLD,
            "best_fitness_found": round(best_found, 4), "goal": round(goal, 4), "strategies": rows,
            "evaluations": total, "cache_hits": cache_hits, "incomplete_runs": incomplete,
            "date": date.today().isoformat(),
            "machine": f"{platform.processor() or platform.machine()}, {_cores()} cores (CPU only; simulated target)",
            "command": args.command_line}


def _cores() -> int:
    return os.cpu_count() or 0


def write(result: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = f"strategies_{result['op']}_{result['hw']}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"# Evaluations to reach 95% of the best fitness found: {result['op']} on {result['hw']} (simulated)", "",
             f"Best simulated fitness found by any run: {result['best_fitness_found']} (goal "
             f"{result['goal']}). {result['evaluations']} evaluations, {result['cache_hits']} served by the "
             f"shared evaluation cache. Date {result['date']}; {result['machine']}."
             + (f" **{result['incomplete_runs']} run(s) had not reached their budget**: they count as not reaching "
                "the goal unless they already had." if result["incomplete_runs"] else ""), "",
             f"Command: `{result['command']}`", "",
             "| strategy | seeds reaching goal | evals to 95% median | min..max | final best median (min..max) |",
             "|---|---|---|---|---|"]
    for name, r in result["strategies"].items():
        lines.append(f"| {name} | {r['reached']}/{r['seeds']} | {r['evals_to_95_median']} | "
                     f"{r['evals_to_95_min']}..{r['evals_to_95_max']} | {r['final_best_median']} "
                     f"({r['final_best_min']}..{r['final_best_max']}) |")
    lines += ["", "A run that never reaches the goal within its budget B counts as B+1 (so medians stay defined "
              "and such runs rank last)."]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("run", "report"))
    parser.add_argument("--op", default="conv1d")
    parser.add_argument("--hw", default="mi350")
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    parser.add_argument("--state", default="/tmp/ke-strategies")
    args = parser.parse_args()
    args.command_line = "python benchmarks/strategies.py " + " ".join(sys.argv[1:])
    if args.mode == "run":
        run_all(args)
    result = report(args)
    write(result)
    print(json.dumps(result["strategies"], indent=2))


if __name__ == "__main__":
    main()
