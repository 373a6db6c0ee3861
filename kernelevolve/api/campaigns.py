"""``campaign``: run (or resume) a whole campaign of searches on shared pools; ``sweep`` runs its plans here too.

``ke campaign FILE.toml`` is this plus printing; its ``--json`` output is the dict these return.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelevolve.api.checks import check_target
from kernelevolve.api.progress import Progress, board
from kernelevolve.api.stores import checked_state, open_state
from kernelevolve.errors import UserError

if TYPE_CHECKING:
    from kernelevolve.campaign import CampaignPlan


def campaign(file: str | Path, *, concurrency: int | None = None, executor: str | None = None,
             ray_address: str | None = None, state_dir: str | None = None, store_url: str | None = None,
             progress: Callable[[], Progress] | None = None) -> dict[str, Any]:
    """Search the file's ops x targets x strategies together; the same file again resumes it. Options left
    None take the file's values. The summary's ``status`` is "completed" or "incomplete" and ``failures``
    lists runs that failed (``ke campaign`` exits 1 for either)."""
    from kernelevolve.campaign import load_plan

    file = Path(file)
    plan = load_plan(file)  # checks the file and every spec it names
    return run_plan(plan, {"file": str(file)}, executor, ray_address, concurrency, state_dir, store_url,
                    progress=progress)


def run_plan(plan: CampaignPlan, source: dict, executor: str | None, ray_address: str | None,
             concurrency: int | None, state_dir: str | None, store_url: str | None,
             retry_failed: bool = True, progress: Callable[[], Progress] | None = None) -> dict[str, Any]:
    """Run (or resume) a checked plan to its end and return its summary: ``campaign`` and ``sweep`` share it,
    so a sweep resumes exactly as a campaign does. ``source`` is stored with the campaign (where the plan
    came from). Every check comes before any executor starts; a plan with nothing left starts none (issue #30).
    ``retry_failed=False`` counts a run the orchestrator failed with a reason (no lowering, does not fit the
    device) as settled: a sweep re-run then redoes nothing, where a campaign re-run tries such runs again."""
    from interpreters.targets import get_target
    from kernelevolve.execution import check_executor, default_executor, open_execution, ray_address_for

    paths = checked_state(state_dir, store_url)
    executor = executor or plan.executor or default_executor()
    ray_address = ray_address or plan.ray_address
    concurrency = concurrency if concurrency is not None else plan.concurrency
    if concurrency < 1:
        raise UserError(f"--concurrency must be at least 1, got {concurrency}")
    check_executor(executor, ray_address)
    ray_address = ray_address_for(executor, ray_address)
    if not ray_address:
        for planned in plan.runs:
            check_target(get_target(planned.hw), planned.simulate)
    finished = _settled(plan, paths, state_dir, store_url, retry_failed)  # before any executor starts (issue #30)
    if finished is not None:
        return finished
    # Join (or start) the executor before anything is written: an unreachable cluster is bad input.
    execution = open_execution(executor, ray_address, sorted({r.hw for r in plan.runs}), concurrency,
                               paths.scratch)
    try:
        return _run_campaign(plan, source, execution, executor, concurrency, state_dir, store_url, retry_failed,
                             progress)
    finally:
        execution.close()  # before printing: while Ray runs, stdout is lent to stderr (see kernelevolve.execution)


def _run_campaign(plan, source, execution, executor, concurrency, state_dir, store_url, retry_failed,
                  progress) -> dict:
    from kernelevolve.run_setup import drive

    _, meta, objects = open_state(state_dir, store_url, create=True)
    stored = _stored(meta, plan)
    if stored is None:
        campaign_id = uuid.uuid4().hex[:8]
        meta.create_campaign(campaign_id, plan.name, plan.plan_hash,
                             {**source, "runs": [asdict(r) for r in plan.runs]})
    else:
        campaign_id = stored["campaign_id"]
    runs = _runs_to_drive(plan, campaign_id, meta, objects, executor, concurrency, retry_failed)
    display = board(progress)
    if runs:
        display.note(f"campaign {plan.name} [{campaign_id}]: {len(runs)} of {len(plan.runs)} runs to go, "
                     f"{concurrency} in flight, executor {executor}")
        try:
            _, failures = drive(runs, meta, objects, execution, concurrency, display.track)
        finally:
            display.close()
    else:
        display.close()
        failures = []
    summary = _summary(plan, campaign_id, meta, failures)
    meta.set_campaign_status(campaign_id, summary["status"])
    return summary


def settled_run(run, retry_failed: bool = True) -> bool:
    """Nothing left to do for the run: completed, or (unless failed runs are retried) failed with the
    orchestrator's reason. A run marked failed without one (the store or a bug stopped it) is always resumed."""
    if run.status == "completed":
        return True
    return not retry_failed and run.status == "failed" and bool((run.config or {}).get("failure"))


def _stored(meta, plan) -> dict | None:
    """The stored campaign of the plan's name, or None; the same name with another plan is refused."""
    stored = meta.campaign_by_name(plan.name)
    if stored is not None and stored["plan_hash"] != plan.plan_hash:
        raise UserError(f"campaign '{plan.name}' already exists with a different plan; give the changed file a "
                        "new name (the stored campaign is kept as it is)")
    return stored


def _settled(plan, paths, state_dir, store_url, retry_failed: bool = True) -> dict | None:
    """Checked before any executor starts, so that it takes no Ray start-up (issue #30): a changed plan is
    refused; a campaign whose every run completed gets its summary (None: there is work to do)."""
    if not paths.db_path.exists():
        return None
    _, meta, _ = open_state(state_dir, store_url, create=False)
    stored = _stored(meta, plan)
    if stored is None:
        return None
    by_slot = meta.campaign_runs(stored["campaign_id"])
    if len(by_slot) != len(plan.runs) or not all(settled_run(r, retry_failed) for r in by_slot.values()):
        return None
    return _summary(plan, stored["campaign_id"], meta, [])


def _summary(plan, campaign_id: str, meta, failures: list) -> dict:
    by_slot = meta.campaign_runs(campaign_id)
    done = all(r.status == "completed" for r in by_slot.values()) and len(by_slot) == len(plan.runs)
    counts = meta.run_node_counts()
    rows = []
    for planned in plan.runs:
        run = by_slot[planned.slot]
        best = meta.best_nodes(run.run_id, 1)
        rows.append({"slot": planned.slot, "run_id": run.run_id, "op": run.op, "hw": run.hw,
                     "strategy": run.strategy, "seed": run.seed, "status": run.status,
                     "nodes": counts.get(run.run_id, 0), "budget": run.budget,
                     "best_node_id": best[0].node_id if best else None,
                     "best_fitness": best[0].fitness if best else None})
    return {"campaign_id": campaign_id, "name": plan.name, "status": "completed" if done else "incomplete",
            "runs": rows, "failures": [{"run_id": r, "error": e} for r, e in failures]}


def _runs_to_drive(plan, campaign_id, meta, objects, executor, concurrency, retry_failed=True):
    """Existing unfinished runs of the campaign (checked resumable), plus new runs for slots never started."""
    from evaluators.spec import SpecError, load_spec
    from interpreters.targets import get_target
    from kernelevolve.builtin_specs import resolve_op
    from kernelevolve.inputs import source_file
    from kernelevolve.run_records import SearchConfig, check_resumable
    from kernelevolve.run_setup import new_run

    existing = meta.campaign_runs(campaign_id)
    runs = []
    for planned in plan.runs:
        run = existing.get(planned.slot)
        if run is not None:
            if not settled_run(run, retry_failed):
                if not Path(run.op_path).is_file():
                    raise UserError(f"spec {run.op_path} of run {run.run_id} no longer exists")
                check_resumable(run, source_file(run.op_path, f"run {run.run_id}'s spec")[1])
                runs.append(run)
            continue
        try:
            spec = load_spec(resolve_op(planned.op))
        except (FileNotFoundError, SpecError) as exc:
            raise UserError(f"run {planned.slot} ({planned.label}): {exc}") from None
        cfg = SearchConfig(op=spec.name, spec_path=str(spec.path), hw=planned.hw, strategy=planned.strategy,
                           budget=planned.budget, seed=planned.seed, drafts=planned.drafts,
                           timeout_s=planned.timeout, time_limit_s=planned.time_limit,
                           simulate=planned.simulate or get_target(planned.hw).always_simulated,
                           concurrency=concurrency, executor=executor, reuse=planned.reuse)
        runs.append(new_run(meta, objects, cfg, spec.path.read_text(encoding="utf-8"), reuse=planned.reuse,
                            campaign={"id": campaign_id, "slot": planned.slot, "name": plan.name}))
    return runs
