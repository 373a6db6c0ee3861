"""``ke search``: validate everything, then create (or resume) a run and drive it to the end."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kernelevolve.cli.common import (
    checked_state,
    emit_json,
    json_option,
    load_op,
    open_state,
    resolve_run,
    state_options,
)
from kernelevolve.cli.progress import ProgressBoard
from kernelevolve.errors import RunFailed, UserError
from kernelevolve.store.run_lock import hold_run
from search.policy import STRATEGIES

OPERATORS = ("offline", "anthropic", "openai")


@click.command("search")
@click.option("--op", "op", default=None, help="Built-in op name or path to a spec file.")
@click.option("--hw", "hw", default=None, help="Hardware target (see 'ke hw list').")
@click.option("--simulate", is_flag=True, help="Estimate time on a device target with the simulator.")
@click.option("--strategy", default="greedy", show_default=True, help="|".join(STRATEGIES))
@click.option("--budget", type=int, default=12, show_default=True, help="Number of candidates to evaluate.")
@click.option("--time-limit", type=float, default=None, help="Stop after this many seconds.")
@click.option("--concurrency", type=int, default=1, show_default=True, help="Expansions in flight.")
@click.option("--operator", "operator_name", default="offline", show_default=True, help="|".join(OPERATORS))
@click.option("--model", default=None, help="Model name for an LLM operator.")
@click.option("--max-cost", type=float, default=None, help="Stop the run once its LLM spend reaches this (USD).")
@click.option("--code-root", "code_root", multiple=True,
              help="A folder the LLM operator's grep tool also searches (env KE_CODE_ROOTS adds more).")
@click.option("--executor", default=None, help="local|ray (default: ray when installed; env KE_EXECUTOR).")
@click.option("--ray-address", default=None, help="Join this Ray cluster instead of starting a local one.")
@click.option("--resume", "resume_id", default=None, help="Continue a stopped run.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--drafts", type=int, default=3, show_default=True, help="Expansions drafted from the root.")
@click.option("--no-reuse", is_flag=True, help="Do not seed the drafts from kernels stored by earlier runs.")
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Per-phase evaluation timeout in seconds.")
@state_options
@json_option
def search_cmd(op, hw, simulate, strategy, budget, time_limit, concurrency, operator_name, model, max_cost, code_root,
               executor, ray_address, resume_id, seed, drafts, no_reuse, timeout_s, state_dir, store_url,
               as_json) -> None:
    """Search for a fast, correct Triton kernel for an operator on a target."""
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.execution import check_executor, default_executor, open_execution, ray_address_for
    from kernelevolve.inputs import source_file
    from kernelevolve.knowledge.roots import CodeRootError, code_roots
    from kernelevolve.run_records import SearchConfig, check_resumable
    from kernelevolve.run_setup import new_run
    from kernelevolve.state import resolve_state

    executor = executor or default_executor()
    reject_unsupported(concurrency, operator_name, model, max_cost)
    try:
        roots = tuple(str(p) for p in code_roots(code_root))
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
        if operator_name == "offline":
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
                               budget=budget, seed=seed, operator=operator_name, drafts=drafts,
                               timeout_s=timeout_s, time_limit_s=time_limit,
                               simulate=simulate or target.always_simulated, concurrency=concurrency,
                               executor=executor, reuse=not no_reuse, model=model, max_cost=max_cost,
                               code_roots=roots)
            run = new_run(meta, objects, cfg, spec.path.read_text(encoding="utf-8"), reuse=not no_reuse,
                          shrunk=shrunk)
            hold_run(paths.root, run.run_id)
        except BaseException:
            execution.close()
            raise
    final = _drive(run, meta, objects, execution, concurrency)
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
    if as_json:
        emit_json(summary)
    else:
        if summary.get("shrunk"):
            click.echo(shrunk_line(summary["shrunk"]))
        if summary["stop_reason"] == "exhausted":
            click.echo(f"stopped before the budget: the {operator_name} operator has no untried variant left")
        click.echo(f"run {final.run_id}: {summary['nodes']} nodes, "
                   + (f"best node {best[0].node_id} fitness {best[0].fitness:.3f}" if best else "no correct kernel"))
        click.echo(f"  ke show {final.run_id} --tree    ke best {final.run_id} --out kernel.py")
    if not best:
        sys.exit(1)


def reject_unsupported(concurrency: int, operator_name: str, model: str | None, max_cost: float | None) -> None:
    import os

    if concurrency < 1:
        raise UserError(f"--concurrency must be at least 1, got {concurrency}")
    if operator_name not in OPERATORS:
        raise UserError(f"unknown operator '{operator_name}' (known: {', '.join(OPERATORS)})")
    if operator_name == "offline" and model is not None:
        raise UserError("--model needs an LLM operator (--operator anthropic or openai)")
    if max_cost is not None and max_cost <= 0:
        raise UserError(f"--max-cost must be positive, got {max_cost}")
    if operator_name == "anthropic" and not os.environ.get("ANTHROPIC_API_KEY"):
        raise UserError("--operator anthropic needs ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint)")
    if operator_name == "openai" and not os.environ.get("OPENAI_BASE_URL"):
        raise UserError("--operator openai needs OPENAI_BASE_URL (an OpenAI-compatible endpoint) and OPENAI_API_KEY")


def test_case_shrink(spec, target, simulate: bool) -> dict:
    """On the CPU interpreter, a spec without get_test_inputs is checked on its production inputs scaled down:
    plan that now, so a file that cannot be shrunk is refused before anything is written (SpecError)."""
    from evaluators.spec import SpecError

    if target.runs_on_device(simulate):
        return {}
    try:
        return spec.shrunk
    except SpecError as exc:
        raise UserError(str(exc)) from None


def shrunk_line(shrunk: dict) -> str:
    sizes = ", ".join(f"{name} {old}->{new}" for name, (old, new) in shrunk.items())
    return f"  test inputs shrunk from the production sizes: {sizes}"


def check_drafts(spec, target: str) -> None:
    """The offline operator drafts from the op's samples or the template lowering of its reference: an op with
    neither is refused in one line now, not after an executor started and a run was stored to fail."""
    from kernelevolve.operators.base import OperatorError
    from kernelevolve.operators.offline import OfflineOperator

    try:
        OfflineOperator().samples(spec.name, spec.path.read_text(encoding="utf-8"), target)
    except OperatorError as exc:
        raise UserError(str(exc)) from None


def check_target(target, simulate) -> None:
    """Refuse a device target this host cannot serve, with the hint (exit 2, nothing written)."""
    from interpreters.executor import DeviceUnavailable, worker_settings

    try:
        worker_settings(target, simulate)
    except (DeviceUnavailable, NotImplementedError) as exc:
        raise UserError(str(exc)) from None


def _drive(run, meta, objects, execution, concurrency):
    from kernelevolve.run_setup import drive

    board = ProgressBoard()
    try:
        finished, failures = drive([run], meta, objects, execution, concurrency, board.track)
    finally:
        board.close()
        execution.close()
    if failures:
        raise RunFailed(failures[0][1])
    return finished[0]
