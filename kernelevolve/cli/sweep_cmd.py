"""``ke sweep DIR``: every KernelBench-format problem under DIR as one resumable campaign, ending in a matrix
per level (correct rate, fast_p against eager and torch.compile, geomeans, fraction of the floor).

The work is ``kernelevolve.api.sweep``: it plans with ``kernelevolve.campaign.build_plan`` and runs with the
campaign's ``run_plan``, in this process, so a sweep resumes exactly as ``ke campaign`` does; re-running a
finished sweep starts no executor and only rewrites the matrix. A problem that ends without a correct kernel is
a row of the matrix, not an error: the exit code is 0 once every problem has its verdict, 1 while some are
unfinished, 2 for bad input (nothing written).
"""

from __future__ import annotations

import shlex
import sys

import click

from kernelevolve.cli.common import emit_json, json_option, state_options
from kernelevolve.cli.progress import ProgressBoard
from search.policy import STRATEGIES


@click.command("sweep")
@click.argument("paths", nargs=-1)
@click.option("--hw", "hw", default=None, help="Hardware target (see 'ke hw list').")
@click.option("--budget", type=int, default=4, show_default=True, help="Candidates per problem.")
@click.option("--strategy", default="greedy", show_default=True, help="|".join(STRATEGIES))
@click.option("--concurrency", type=int, default=1, show_default=True, help="Expansions in flight, all problems.")
@click.option("--executor", default=None, help="local|ray (default: ray when installed; env KE_EXECUTOR).")
@click.option("--ray-address", default=None, help="Join this Ray cluster instead of starting a local one.")
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Per-phase evaluation timeout in seconds.")
@click.option("--only", default=None, help="Comma-separated globs over 'level/stem', e.g. 'level1/*,level2/1*'.")
@click.option("--shard", default=None, help="i/n: every n-th problem from i (one sweep per GPU of a host).")
@click.option("--out", "out", default=None, help="Path prefix of the matrix (.json and .md); default "
              "<state-dir>/sweep_<hw>.")
@click.option("--matrix-only", is_flag=True, help="Rebuild the matrix from the store; run nothing.")
@click.option("--merge", is_flag=True, help="PATHS are shard reports (.json): join them into one; run nothing.")
@click.option("--name", default=None, help="Campaign name (default: from DIR's name, hw, budget, strategy, "
              "--only, --shard); the same name resumes.")
@click.option("--retry-failed", is_flag=True, help="Search again the problems whose run failed (no lowering, "
              "does not fit the device); by default they are verdicts, kept.")
@state_options
@json_option
def sweep_cmd(paths, hw, budget, strategy, concurrency, executor, ray_address, timeout_s, only, shard, out,
              matrix_only, merge, name, retry_failed, state_dir, store_url, as_json) -> None:
    """Search every KernelBench-format problem under DIR (DIR/levelN/*.py) as one campaign; re-running resumes."""
    from kernelevolve.api import sweep
    from kernelevolve.api.sweeps import summary_lines

    result = sweep(paths, hw=hw, budget=budget, strategy=strategy, concurrency=concurrency, executor=executor,
                   ray_address=ray_address, timeout_s=timeout_s, only=only, shard=shard, out=out,
                   matrix_only=matrix_only, merge=merge, name=name, retry_failed=retry_failed, state_dir=state_dir,
                   store_url=store_url, command=_command(), progress=ProgressBoard)
    if as_json:
        emit_json(result)
    else:
        for line in summary_lines(result):
            click.echo(line)
    if not merge and not result["finished"]:
        sys.exit(1)


def _command() -> str:
    """The command as typed: ``ke sweep ...`` (global options before it dropped), else this process's argv."""
    argv = sys.argv[1:]
    if "sweep" in argv:
        return shlex.join(["ke", *argv[argv.index("sweep"):]])
    return shlex.join(["python3", *sys.argv])
