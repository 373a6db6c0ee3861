"""``ke aten-sweep``: the ATen coverage suite on one target, as a resumable campaign, ending in a matrix
(``kernelevolve.api.aten_sweep``); this prints what it ran."""

from __future__ import annotations

import sys

import click

from kernelevolve.cli.common import emit_json, json_option, state_options
from kernelevolve.cli.progress import SweepProgress
from search.policy import STRATEGIES


@click.command("aten-sweep")
@click.option("--hw", "hw", required=True, help="Hardware target (see 'ke hw list').")
@click.option("--ops", "ops", default=None, help="Comma-separated globs over op names, e.g. 'log*,add.*' "
              "(default: all 160).")
@click.option("--budget", type=int, default=1, show_default=True,
              help="Candidates per op: 1 checks the lowered draft; more searches its tunables for speed.")
@click.option("--strategy", default="greedy", show_default=True, help="|".join(STRATEGIES))
@click.option("--simulate", is_flag=True, help="Estimate time on a device target with the simulator.")
@click.option("--concurrency", type=int, default=1, show_default=True, help="Evaluations in flight.")
@click.option("--operator", "operator_name", default="offline", show_default=True,
              help="offline (the lowering, then tunables) | anthropic | openai (an LLM writes the kernels).")
@click.option("--model", default=None, help="Model name for an LLM operator.")
@click.option("--executor", default=None, help="local|ray (default: ray when installed; env KE_EXECUTOR).")
@click.option("--ray-address", default=None, help="Join this Ray cluster instead of starting a local one.")
@click.option("--seeds", "seeds", type=int, default=None,
              help="Random input seeds each op's correctness is checked on (default 3; fewer: quicker).")
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Per-phase evaluation timeout in seconds.")
@click.option("--out", "out", default=None, type=click.Path(dir_okay=False),
              help="Path prefix of the matrix (.json and .md); default <state-dir>/aten_sweep_<hw>.")
@click.option("--report", "html_report", is_flag=True,
              help="Also write the matrix as an HTML report (.html): coverage heat-map, speedup distribution.")
@state_options
@json_option
def aten_sweep_cmd(hw, ops, budget, strategy, simulate, concurrency, operator_name, model, executor, ray_address,
                   seeds, timeout_s, out, html_report, state_dir, store_url, as_json) -> None:
    """Run the 160-op ATen suite on a target; re-running it resumes. Ends with 'N/160 correct'."""
    from kernelevolve.api import aten_sweep

    argv = sys.argv[1:]  # global options (ke --state-dir X aten-sweep ...) may come first
    command = "ke " + " ".join(argv[argv.index("aten-sweep"):] if "aten-sweep" in argv else ["aten-sweep"])
    try:
        result = aten_sweep(hw, ops=ops, budget=budget, strategy=strategy, simulate=simulate,
                            concurrency=concurrency, operator=operator_name, model=model, executor=executor,
                            ray_address=ray_address, timeout_s=timeout_s, out=out, html_report=html_report,
                            state_dir=state_dir, store_url=store_url, command=command, progress=SweepProgress,
                            seeds=seeds)
    except KeyboardInterrupt:  # drive() marked the runs in flight interrupted; the store holds the rest
        click.echo("ke: interrupted; run the same 'ke aten-sweep' command again to resume", err=True)
        sys.exit(130)
    summary, matrix = result["summary"], result["matrix"]
    covered = len(matrix["coverage"]["covered"])
    if as_json:
        emit_json(result)
    else:
        for row in result["ops"]:
            if not row["correct"]:
                click.echo(f"  {row['op']}: {row['status']}: {' '.join(str(row['reason']).split())[:200]}")
        click.echo(f"matrix: {result['files'][0]} and {result['files'][1]} ({matrix['summary']['correct']}/"
                   f"{covered} correct over the {covered} of {matrix['coverage']['suite']} ops it covers)")
        if html_report:
            click.echo(f"report: {result['files'][2]}")
        click.echo(f"{summary['correct']}/{summary['total']} correct")
    if result["failures"] or summary["correct"] != summary["total"]:
        sys.exit(1)
