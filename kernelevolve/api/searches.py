"""``search`` and ``resume``: check everything, then create (or reopen) a run and drive it to the end.

``ke search`` is this plus printing; its ``--json`` output is the dict these return.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kernelevolve.api.checks import check_drafts, check_target, reject_unsupported, test_case_shrink
from kernelevolve.api.progress import Progress, board
from kernelevolve.api.stores import checked_state, load_op, open_state, resolve_run
from kernelevolve.errors import RunFailed, UserError
from kernelevolve.store.run_lock import hold_run
from search.policy import STRATEGIES


def search(op: str | None = None, hw: str | None = None, *, simulate: bool = False, strategy: str = "greedy",
           budget: int = 12, time_limit: float | None = None, concurrency: int = 1, operator: str = "offline",
           model: str | None = None, max_cost: float | None = None, code_roots: Sequence[str] = (),
           executor: str | None = None, ray_address: str | None = None, resume_id: str | None = None,
           seed: int = 0, drafts: int = 3, reuse: bool = True, timeout_s: float = 120.0,
           state_dir: str | None = None, store_url: str | None = None,
           progress: Callable[[], Progress] | None = None) -> dict[str, Any]:
    """Search ``op`` on target ``hw`` (or, with ``resume_id``, continue that stopped run) and return its summary.

    Options mirror ``ke search``'s, defaults included; every one is checked before anything is written, even
    those a resumed run ignores (its stored config wins), so a command is refused the same way either way.
    ``summary["best"]`` is None when no kernel was correct (``ke search`` then exits 1); ``RunFailed`` when the
    run itself failed."""
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.execution import check_executor, default_executor, open_execution, ray_address_for
    from kernelevolve.inputs import source_file
    from kernelevolve.knowledge.roots import CodeRootError
    from kernelevolve.knowledge.roots import code_roots as configured_roots
    from kernelevolve.run_records import SearchConfig, check_resumable
    from kernelevolve.run_setup import new_run
    from kernelevolve.state import resolve_state

    executor = executor or default_executor()
    reject_unsupported(concurrency, operator, model, max_cost)
    try:
        roots = tuple(str(p) for p in configured_roots(tuple(code_roots)))
    except CodeRootError as exc:
        raise UserError(str(exc)) from None
    check_executor(executor, ray_address)
    ray_address = ray_address_for(executor, ray_address)
    if resume_id is None and (op is None or hw is None):
        raise UserError("ke search needs --op and --hw (or --resume RUN)")
    if budget <= 0:
        raise UserError(f"--budget must be a positive integer, got {budget}")
    if strategy not in STRATEGIES:
        raise UserError(f"unknown strategy '{strategy}' (known: {', '.join(STRATEGIES)})")
    checked_state(state_dir, store_url)  # a bad state directory or store URL, before any slow work
    if resume_id is None:
        try:
            target = get_target(hw)
        except UnknownTarget as exc:
            raise UserError(exc.args[0]) from None
        spec = load_op(op)
        shrunk = test_case_shrink(spec, target, simulate)
        if not ray_address:  # on a cluster, the device is the workers' business
            check_target(target, simulate)  # before any state is created
        if operator == "offline":
            check_drafts(spec, target.name)  # before any executor starts and any run is stored (issue #30)
    if resume_id is not None:
        paths, meta, objects = open_state(state_dir, store_url, create=False)
        run = meta.get_run(resolve_run(meta, resume_id))
        assert run is not None
        hold_run(paths.root, run.run_id)  # one process per run: refused here, before anything is written
        spec_path = Path(run.op_path)
        if not spec_path.is_file():
            raise UserError(f"spec {spec_path} of run {run.run_id} no longer exists")
        check_resumable(run, source_file(spec_path, f"run {run.run_id}'s spec")[1])
        if not ray_address:
            check_target(get_target(run.hw), run.simulated)
        execution = open_execution(executor, ray_address, [run.hw], concurrency, paths.scratch)
    else:
        # Join (or start) the executor before anything is written: an unreachable cluster is bad input.
        execution = open_execution(executor, ray_address, [target.name], concurrency,
                                   resolve_state(state_dir, store_url).scratch)
        try:  # an interrupt (SIGINT, SIGTERM, SIGHUP) from here on still stops the pools and a private Ray
            paths, meta, objects = open_state(state_dir, store_url, create=True)
            cfg = SearchConfig(op=spec.name, spec_path=str(spec.path), hw=target.name, strategy=strategy,
                               budget=budget, seed=seed, operator=operator, drafts=drafts,
                               timeout_s=timeout_s, time_limit_s=time_limit,
                               simulate=simulate or target.always_simulated, concurrency=concurrency,
                               executor=executor, reuse=reuse, model=model, max_cost=max_cost,
                               code_roots=roots)
            run = new_run(meta, objects, cfg, spec.path.read_text(encoding="utf-8"), reuse=reuse, shrunk=shrunk)
            hold_run(paths.root, run.run_id)
        except BaseException:
            execution.close()
            raise
    final = _drive(run, meta, objects, execution, concurrency, progress)
    return _summary(final, meta, objects, executor)


def resume(run_id: str, *, concurrency: int = 1, executor: str | None = None, ray_address: str | None = None,
           state_dir: str | None = None, store_url: str | None = None,
           progress: Callable[[], Progress] | None = None) -> dict[str, Any]:
    """Continue a stopped run (id or unique prefix) to its end: ``ke search --resume RUN``."""
    return search(resume_id=run_id, concurrency=concurrency, executor=executor, ray_address=ray_address,
                  state_dir=state_dir, store_url=store_url, progress=progress)


def _summary(final, meta, objects, executor: str) -> dict[str, Any]:
    best = meta.best_nodes(final.run_id, 1)
    summary = {
        "run_id": final.run_id, "status": final.status, "nodes": meta.count_nodes(final.run_id),
        "simulated": final.simulated, "executor": executor, "stop_reason": final.config.get("stop_reason"),
        "seeded_from": final.config.get("seeded_from") or [],
        "best": ({"node_id": best[0].node_id, "fitness": best[0].fitness, "path": best[0].path_ref,
                  "url": f"{objects.url.rstrip('/')}/{best[0].path_ref}"} if best else None),
    }
    if best and final.config.get("final"):
        summary["best"]["remeasured"] = final.config["final"]
    if final.config.get("shrunk"):
        summary["shrunk"] = final.config["shrunk"]
    return summary


def _drive(run, meta, objects, execution, concurrency: int, progress: Callable[[], Progress] | None):
    """The run to its end; the display closes before the executor, and the executor always closes."""
    from kernelevolve.run_setup import drive

    display = board(progress)
    try:
        finished, failures = drive([run], meta, objects, execution, concurrency, display.track)
    finally:
        display.close()
        execution.close()
    if failures:
        raise RunFailed(failures[0][1])
    return finished[0]
