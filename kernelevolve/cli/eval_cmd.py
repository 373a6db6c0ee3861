"""``ke eval``: check and time one candidate file on a target (``kernelevolve.api.evaluate``), without touching
the run store."""

from __future__ import annotations

import sys

import click

from kernelevolve.cli.common import emit_json, json_option, shrunk_line, state_options


@click.command("eval")
@click.option("--op", "op", required=True, help="Built-in op name or path to a spec file.")
@click.option("--hw", "hw", required=True, help="Hardware target.")
@click.option("--simulate", is_flag=True)
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Per-phase timeout in seconds.")
@click.option("--seeds", "seeds", type=int, default=None,
              help="Random input seeds correctness is checked on (default 3, as in a search; fewer: a quicker, "
                   "weaker check).")
@click.option("--ncu", is_flag=True, help="Also collect Nsight Compute metrics (device targets, ncu installed).")
@click.argument("candidate", type=click.Path(dir_okay=False))
@state_options
@json_option
def eval_cmd(op, hw, simulate, timeout_s, seeds, ncu, candidate, state_dir, store_url, as_json) -> None:
    """Evaluate CANDIDATE.py against an operator spec on a target."""
    from kernelevolve.api import evaluate

    evaluation = evaluate(op, hw, candidate, simulate=simulate, timeout_s=timeout_s, ncu=ncu, state_dir=state_dir,
                          store_url=store_url, seeds=seeds)
    result = evaluation.result
    if as_json:
        emit_json(evaluation.to_dict())
    else:
        click.echo(f"{result.status}: fitness {result.fitness:.3f}" + (f" ({result.reason})" if result.reason else "")
                   + (f" [checked on {seeds} seed{'s' if seeds > 1 else ''}]" if seeds is not None else ""))
        if result.extra.get("shrunk"):
            click.echo(shrunk_line(result.extra["shrunk"]))
        for case in result.cases:
            timing = f" {case.latency_ms:.4f} ms (eager {case.eager_ms:.4f}, compile {case.compile_ms})" \
                if case.latency_ms else ""
            click.echo(f"  {case.name}: {case.status} max_abs_err={case.max_abs_err}{timing}")
    if result.status != "ok":
        sys.exit(1)
