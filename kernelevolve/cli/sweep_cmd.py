"""``ke sweep DIR``: every KernelBench-format problem under DIR as one resumable campaign, ending in a matrix
per level (correct rate, fast_p against eager and torch.compile, geomeans, fraction of the floor).

It plans with ``kernelevolve.campaign.build_plan`` and runs with ``campaign_cmd.run_plan``, in this process, so a
sweep resumes exactly as ``ke campaign`` does; re-running a finished sweep starts no executor and only rewrites
the matrix. A problem that ends without a correct kernel is a row of the matrix, not an error: the exit code is 0
once every problem has its verdict, 1 while some are unfinished, 2 for bad input (nothing written).
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import click

from kernelevolve.cli.common import checked_state, emit_json, json_option, open_state, state_options
from kernelevolve.errors import UserError
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
    from kernelevolve.inputs import output_file
    from kernelevolve.sweep import matrix

    if merge:
        if not paths:
            raise UserError("--merge needs the shard reports to join (ke sweep --merge A.json B.json ...)")
        report = matrix.merged([matrix.load_report(Path(p)) for p in paths])
        files = matrix.write(report, output_file(out, "matrix", "--out")) if out else []
        _emit(report, files, as_json)
        return
    root, problems = _checked(paths, hw, budget, strategy, concurrency, timeout_s, only, shard)
    paths_ = checked_state(state_dir, store_url)
    prefix = output_file(out, "matrix", "--out") if out else paths_.root / f"sweep_{hw}"
    started = time.time()
    campaign = None
    unloadable = _unloadable(problems)  # a verdict of their own: one such file never stops the whole sweep
    if not matrix_only and len(unloadable) < len(problems):
        from kernelevolve.campaign import build_plan
        from kernelevolve.cli.campaign_cmd import run_plan

        entries = [{"op": str(p.path), "hw": hw, "strategy": strategy, "budget": budget, "timeout": timeout_s,
                    "reuse": False} for p in problems if p.name not in unloadable]
        plan = build_plan(str(root), name or campaign_name(root, hw, budget, strategy, only, shard), entries,
                          concurrency, executor, ray_address)
        try:
            summary = run_plan(plan, {"kind": "sweep", "dir": str(root)}, executor, ray_address, concurrency,
                               state_dir, store_url, retry_failed=retry_failed)
        except UserError as exc:
            if "different plan" not in str(exc):
                raise
            raise UserError(f"campaign '{plan.name}' already exists with other problems or options (did DIR "
                            "change?); pass --name NEW or another --state-dir (the stored one is kept)") from None
        campaign = {"name": summary["name"], "id": summary["campaign_id"], "status": summary["status"]}
    _, meta, objects = open_state(state_dir, store_url, create=False)
    runs = matrix.newest_runs(meta, problems, hw, campaign["id"] if campaign else None)
    rows = matrix.rows_from_store(meta, objects, problems, runs)
    for row in rows:
        if row["op"] in unloadable and not row["correct"]:
            row.update(status="failed", reason=unloadable[row["op"]], unloadable=True)
    report = matrix.build_report(rows, matrix.node_tally(meta, runs), {
        "hw": hw, "budget": budget, "strategy": strategy, "only": only, "shard": shard, "dir": str(root),
        "campaign": campaign, "seconds": time.time() - started, "command": _command()})
    # every problem has its verdict (the campaign itself says "incomplete" while a run is failed: ke campaign's word)
    report["finished"] = all(_settled(r) for r in rows)
    files = matrix.write(report, prefix)
    _emit(report, files, as_json)
    if not report["finished"]:
        sys.exit(1)


def _checked(paths, hw, budget, strategy, concurrency, timeout_s, only, shard) -> tuple[Path, list]:
    """Every argument checked, before any state is touched: bad input is one line and exit 2."""
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.inputs import directory
    from kernelevolve.sweep.problems import discover, parse_shard, select
    from kernelevolve.sweep.problems import shard as take_shard

    if len(paths) != 1:
        raise UserError(f"ke sweep needs one DIR (a folder of KernelBench-format problems), got {len(paths)}")
    if hw is None:
        raise UserError("ke sweep needs --hw (see 'ke hw list')")
    if budget < 1:
        raise UserError(f"--budget must be at least 1, got {budget}")
    if concurrency < 1:
        raise UserError(f"--concurrency must be at least 1, got {concurrency}")
    if timeout_s <= 0:
        raise UserError(f"--timeout must be positive, got {timeout_s:g}")
    if strategy not in STRATEGIES:
        raise UserError(f"unknown strategy '{strategy}' (known: {', '.join(STRATEGIES)})")
    try:
        get_target(hw)
    except UnknownTarget as exc:
        raise UserError(exc.args[0]) from None
    which = parse_shard(shard)
    root = directory(paths[0], "problem folder").resolve()
    found = discover(root)
    if not found:
        raise UserError(f"no KernelBench-format problem under {paths[0]} (a .py file with class Model and "
                        "get_inputs, in DIR or in DIR/<level>/)")
    problems = take_shard(select(found, only), which)
    if not problems:
        raise UserError(f"no problem of {paths[0]} left after --only {only or '-'} --shard {shard or '-'} "
                        f"({len(found)} found)")
    return root, problems


def campaign_name(root: Path, hw: str, budget: int, strategy: str, only: str | None, shard: str | None) -> str:
    """Deterministic, so the same command resumes the same campaign."""
    return (f"sweep:{root.name}@{hw}-b{budget}-{strategy}" + (f"-only:{only}" if only else "")
            + (f"-shard:{shard}" if shard else ""))


def _settled(row: dict) -> bool:
    """The problem has its verdict: its run completed, the orchestrator failed it with a reason, or its file
    cannot be loaded here."""
    return (row.get("run_status") == "completed" or bool(row.get("unloadable"))
            or (row.get("run_status") == "failed" and bool(row.get("reason"))))


def _unloadable(problems: list) -> dict[str, str]:
    """Problem name -> one-line reason, for files that do not import or lack what a spec needs (a module this
    host does not have, such as einops): each becomes a failed row, and the others run."""
    from evaluators.spec import SpecError, load_spec

    found = {}
    for problem in problems:
        try:
            load_spec(problem.path)
        except SpecError as exc:
            found[problem.name] = "cannot load the problem: " + " ".join(str(exc).split())[:300]
    return found


def _command() -> str:
    """The command as typed: ``ke sweep ...`` (global options before it dropped), else this process's argv."""
    argv = sys.argv[1:]
    if "sweep" in argv:
        return shlex.join(["ke", *argv[argv.index("sweep"):]])
    return shlex.join(["python3", *sys.argv])


def _emit(report: dict, files: list[str], as_json: bool) -> None:
    rows = report["rows"]
    correct = sum(bool(r["correct"]) for r in rows)
    if as_json:
        emit_json({**report, "files": files})
        return
    for r in rows:
        if not r["correct"]:
            click.echo(f"  {r['op']}: {r['status']}: {' '.join(str(r.get('reason') or '').split())[:200]}")
    for level, s in report["levels"].items():
        fast = (s.get("fast_p") or {}).get("compile") or {}
        f1 = fast.get("1")
        click.echo(f"{level}: {s['correct']}/{s['total']} correct"
                   + ("" if f1 is None else f", fast_1 vs compile {f1:.0%}"))
    if files:
        click.echo(f"matrix: {files[0]} and {files[1]}")
    click.echo(f"{correct}/{len(rows)} correct")
