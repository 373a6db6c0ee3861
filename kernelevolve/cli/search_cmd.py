"""``ke search``: the options to ``kernelevolve.api.search`` (which checks them, then creates or resumes a run and
drives it to the end), and its summary printed."""

from __future__ import annotations

import sys

import click

from kernelevolve.api.checks import OPERATORS
from kernelevolve.cli.common import emit_json, json_option, shrunk_line, state_options
from kernelevolve.cli.progress import ProgressBoard
from search.policy import STRATEGIES


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
    from kernelevolve.api import search

    summary = search(op, hw, simulate=simulate, strategy=strategy, budget=budget, time_limit=time_limit,
                     concurrency=concurrency, operator=operator_name, model=model, max_cost=max_cost,
                     code_roots=code_root, executor=executor, ray_address=ray_address, resume_id=resume_id,
                     seed=seed, drafts=drafts, reuse=not no_reuse, timeout_s=timeout_s, state_dir=state_dir,
                     store_url=store_url, progress=ProgressBoard)
    best = summary["best"]
    if as_json:
        emit_json(summary)
    else:
        if summary.get("shrunk"):
            click.echo(shrunk_line(summary["shrunk"]))
        if summary["stop_reason"] == "exhausted":
            click.echo(f"stopped before the budget: the {operator_name} operator has no untried variant left")
        click.echo(f"run {summary['run_id']}: {summary['nodes']} nodes, "
                   + (f"best node {best['node_id']} fitness {best['fitness']:.3f}" if best else "no correct kernel"))
        click.echo(f"  ke show {summary['run_id']} --tree    ke best {summary['run_id']} --out kernel.py")
    if not best:
        sys.exit(1)
