"""What ``ke search`` and ``ke campaign`` share: creating runs (with cross-run seeds), building each run's
operator, and driving a set of runs to the end on one executor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

from kernelevolve import interrupts
from kernelevolve.errors import RunFailed
from kernelevolve.execution import Execution
from kernelevolve.operators.offline import OfflineOperator
from kernelevolve.operators.seeded import SeededOperator
from kernelevolve.orchestrator import Orchestrator, RunDriver, complete
from kernelevolve.run_records import SearchConfig, create_run
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from kernelevolve.store.records import RunRecord
from kernelevolve.store.run_lock import hold_run

log = structlog.get_logger("kernelevolve.run_setup")


def new_run(meta: MetadataStore, objects: ObjectStore, cfg: SearchConfig, spec_text: str, reuse: bool = True,
            campaign: dict[str, Any] | None = None, shrunk: dict[str, Any] | None = None) -> RunRecord:
    """Create a run; with ``reuse`` its first drafts are the best stored kernels of the same op (any target).
    ``shrunk`` records the constants a KernelBench file's test case scaled down ({name: [prod, test]})."""
    seeds = meta.best_for_op(cfg.op, cfg.drafts, cfg.hw) if reuse else []
    extra: dict[str, Any] = {"seeded_from": seeds}
    if campaign:
        extra["campaign"] = campaign
    if shrunk:
        extra["shrunk"] = shrunk
    run = create_run(meta, objects, cfg, spec_text, extra)
    if seeds:
        log.info("run_seeded", run_id=run.run_id, seeds=[(s["run_id"], s["node_id"], s["hw"]) for s in seeds])
    return run


def make_operator(run: RunRecord, objects: ObjectStore) -> Any:
    # An ATen sweep run's cases differ in dtype, rank and broadcast on purpose: one draft per input structure.
    operator: Any = OfflineOperator(per_structure=bool(run.config.get("aten")))
    if run.operator in ("anthropic", "openai"):
        from kernelevolve.knowledge.samples import kb_root
        from kernelevolve.operators.llm import LLMOperator

        if run.operator == "anthropic":
            from kernelevolve.operators.anthropic_backend import AnthropicBackend

            backend: Any = AnthropicBackend(run.config.get("model"))
        else:
            from kernelevolve.operators.openai_backend import OpenAIBackend

            backend = OpenAIBackend(run.config.get("model"))
        operator = LLMOperator(backend, kb_root(), spec_path=run.config.get("spec_path"),
                               code_roots=[Path(p) for p in run.config.get("code_roots") or [] if Path(p).is_dir()])
    seeds = run.config.get("seeded_from") or []
    if seeds:
        operator = SeededOperator(operator, seeds, [objects.get_text(s["path_ref"]) for s in seeds])
    return operator


def drive(runs: list[RunRecord], meta: MetadataStore, objects: ObjectStore, execution: Execution,
          concurrency: int, track: Any = None) -> tuple[list[RunRecord], list[tuple[str, str]]]:
    """Run every run to its end on shared pools; returns (finished runs, [(run_id, failure)])."""
    for run in runs:  # one process per run (``ke search`` claimed its run already; a campaign claims its here)
        hold_run(Path(meta.path).parent, run.run_id)
    finished: list[RunRecord] = []
    failures: list[tuple[str, str]] = []

    def on_finish(driver: RunDriver) -> None:
        try:
            finished.append(complete(driver, execution.pools))
        except RunFailed as exc:
            failures.append((driver.run.run_id, str(exc)))
            log.error("run_failed", run_id=driver.run.run_id, error=str(exc))

    try:  # from the first line: an interrupt while the drivers are built still marks every run
        drivers = [_driver(run, meta, objects, track) for run in runs]
        interrupts.check()
        Orchestrator(execution.pools, execution.generation, concurrency).run(drivers, on_finish)
    except BaseException as exc:
        unfinished = [run.run_id for run in runs if run.run_id not in {r.run_id for r in finished}]
        if isinstance(exc, KeyboardInterrupt) or interrupts.signalled():
            # A signal's KeyboardInterrupt, or what it broke on its way (a lock released twice, a Ray call cut
            # short): the runs still going are interrupted, never left "running" (issue #30).
            meta.set_status(unfinished, "interrupted")
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise KeyboardInterrupt() from exc
        if isinstance(exc, Exception):  # the store, the disk or a bug stopped the search: none stays "running"
            _mark_failed(unfinished, meta, exc)
        raise
    return finished, failures


def _mark_failed(run_ids: list[str], meta: MetadataStore, exc: Exception) -> None:
    """Best effort: the failure may be the database's own, and then it is what the user must hear about."""
    try:
        meta.set_status(run_ids, "failed")
    except Exception:  # noqa: BLE001 - the original error is re-raised by the caller
        log.error("runs_not_marked_failed", run_ids=run_ids)
    for run_id in run_ids:
        log.error("run_failed", run_id=run_id, error=f"{type(exc).__name__}: {exc}"[:500])


def _driver(run: RunRecord, meta: MetadataStore, objects: ObjectStore, track: Any) -> RunDriver:
    done = meta.count_nodes(run.run_id)
    progress = track(f"{run.op}@{run.hw} {run.strategy} [{run.run_id}]", run.budget, done) if track else None
    return RunDriver(run, meta, objects, make_operator(run, objects), progress)
