"""``ke aten-sweep``: the ATen coverage suite on one target, as a resumable campaign, ending in a matrix."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from kernelevolve.cli.common import checked_state, emit_json, json_option, open_state, state_options
from kernelevolve.errors import UserError
from search.policy import STRATEGIES


@click.command("aten-sweep")
@click.option("--hw", "hw", required=True, help="Hardware target (see 'ke hw list').")
@click.option("--ops", "ops", default=None, help="Comma-separated globs over op names, e.g. 'log*,add.*' "
              "(default: all 160).")
@click.option("--budget", type=int, default=1, show_default=True,
              help="Candidates per op: 1 checks the template lowering; more searches its tunables for speed.")
@click.option("--strategy", default="greedy", show_default=True, help="|".join(STRATEGIES))
@click.option("--simulate", is_flag=True, help="Estimate time on a device target with the simulator.")
@click.option("--concurrency", type=int, default=1, show_default=True, help="Evaluations in flight.")
@click.option("--operator", "operator_name", default="offline", show_default=True,
              help="offline (template lowering, then tunables) | anthropic | openai (an LLM writes the kernels).")
@click.option("--model", default=None, help="Model name for an LLM operator.")
@click.option("--executor", default=None, help="local|ray (default: ray when installed; env KE_EXECUTOR).")
@click.option("--ray-address", default=None, help="Join this Ray cluster instead of starting a local one.")
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Per-phase evaluation timeout in seconds.")
@click.option("--out", "out", default=None, type=click.Path(dir_okay=False),
              help="Path prefix of the matrix (.json and .md); default <state-dir>/aten_sweep_<hw>.")
@click.option("--report", "html_report", is_flag=True,
              help="Also write the matrix as an HTML report (.html): coverage heat-map, speedup distribution.")
@state_options
@json_option
def aten_sweep_cmd(hw, ops, budget, strategy, simulate, concurrency, operator_name, model, executor, ray_address,
                   timeout_s, out, html_report, state_dir, store_url, as_json) -> None:
    """Run the 160-op ATen suite on a target; re-running it resumes. Ends with 'N/160 correct'."""
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.aten.matrix import summarize
    from kernelevolve.aten.sweep import SweepOptions, select_ops
    from kernelevolve.cli.search_cmd import check_target, reject_unsupported
    from kernelevolve.execution import check_executor, default_executor, open_execution, ray_address_for
    from kernelevolve.inputs import output_file

    if budget < 1:
        raise UserError(f"--budget must be at least 1, got {budget}")
    reject_unsupported(concurrency, operator_name, model, None)
    if timeout_s <= 0:
        raise UserError(f"--timeout must be positive, got {timeout_s:g}")
    if strategy not in STRATEGIES:
        raise UserError(f"unknown strategy '{strategy}' (known: {', '.join(STRATEGIES)})")
    try:
        target = get_target(hw)
    except UnknownTarget as exc:
        raise UserError(exc.args[0]) from None
    selected = select_ops(ops)
    executor = executor or default_executor()
    check_executor(executor, ray_address)
    ray_address = ray_address_for(executor, ray_address)
    if not ray_address:
        check_target(target, simulate)
    opts = SweepOptions(hw=hw, budget=budget, strategy=strategy, simulate=simulate or target.always_simulated,
                        timeout_s=timeout_s, concurrency=concurrency, executor=executor, operator=operator_name,
                        model=model)
    paths = checked_state(state_dir, store_url)
    out_prefix = output_file(out, "matrix", "--out") if out else paths.root / f"aten_sweep_{hw}"
    def start_execution():  # only once the plan holds work: a finished sweep never starts Ray
        return open_execution(executor, ray_address, [hw], concurrency, paths.scratch)

    try:
        report, failures = _sweep(selected, opts, start_execution, state_dir, store_url)
    except KeyboardInterrupt:  # drive() marked the runs in flight interrupted; the store holds the rest
        click.echo("ke: interrupted; run the same 'ke aten-sweep' command again to resume", err=True)
        sys.exit(130)
    argv = sys.argv[1:]  # global options (ke --state-dir X aten-sweep ...) may come first
    report["command"] = "ke " + " ".join(argv[argv.index("aten-sweep"):] if "aten-sweep" in argv else ["aten-sweep"])
    _write(report, out_prefix, html_report)
    # what this command ran; the files hold the whole matrix, earlier --ops slices included
    names = {op.name for op in selected}
    ran = [row for row in report["ops"] if row["op"] in names]
    summary = summarize(ran)
    covered = len(report["coverage"]["covered"])
    if as_json:
        emit_json({"target": hw, "correct": summary["correct"], "total": summary["total"],
                   "summary": summary, "files": report["files"], "ops": ran, "failures": failures,
                   "matrix": {"summary": report["summary"], "coverage": report["coverage"]}})
    else:
        for row in ran:
            if not row["correct"]:
                click.echo(f"  {row['op']}: {row['status']}: {' '.join(str(row['reason']).split())[:200]}")
        click.echo(f"matrix: {report['files'][0]} and {report['files'][1]} ({report['summary']['correct']}/"
                   f"{covered} correct over the {covered} of {report['coverage']['suite']} ops it covers)")
        if html_report:
            click.echo(f"report: {report['files'][2]}")
        click.echo(f"{summary['correct']}/{summary['total']} correct")
    if failures or summary["correct"] != summary["total"]:
        sys.exit(1)


def _sweep(selected, opts, start_execution, state_dir, store_url) -> tuple[dict, list]:
    """Plan first (stale, changed or finished runs are sorted out from the store alone), then start the
    executor only for what is left, and close it before anything is printed (Ray lends stdout to stderr)."""
    from kernelevolve.aten.matrix import coverage, merged_rows, summarize
    from kernelevolve.aten.sweep import plan_sweep
    from kernelevolve.cli.progress import SweepProgress
    from kernelevolve.run_setup import drive

    paths, meta, objects = open_state(state_dir, store_url, create=True)
    plan = plan_sweep(meta, objects, selected, opts, paths.root / "aten" / "specs")
    # started before the progress board, whose display would swallow the executor's own log lines
    execution = start_execution() if plan.to_drive else None
    failures: list = []
    try:
        progress = SweepProgress(f"aten-sweep {opts.hw}", len(selected), len(selected) - len(plan.to_drive))
        progress.note(f"aten-sweep on {opts.hw} [{opts.campaign_name}, campaign {plan.campaign_id}]: "
                      f"{len(selected)} ops; {plan.reused} already done, {plan.resumed} resumed, {plan.created} "
                      f"new; {opts.concurrency} in flight on {opts.executor}")
        try:
            if execution is not None:
                _, failures = drive(plan.to_drive, meta, objects, execution, opts.concurrency, progress.track)
        finally:
            progress.close()
    finally:
        if execution is not None:
            execution.close()
    runs = {name: meta.get_run(run.run_id) for name, run in plan.runs.items()}
    rows = merged_rows(meta, objects, runs, meta.campaign_runs(plan.campaign_id))  # earlier slices kept
    report = {"target": opts.hw, "simulated": opts.simulate, "budget": opts.budget, "strategy": opts.strategy,
              "campaign_id": plan.campaign_id, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              **_provenance(rows, opts), "summary": summarize(rows),
              "coverage": coverage(rows, [op.name for op in selected]), "ops": rows}
    return report, [{"run_id": r, "error": e} for r, e in failures]


def _provenance(rows: list[dict], opts) -> dict:
    """Which device and versions produced the numbers: the evaluator's own record when timed on a GPU."""
    import importlib.metadata as md

    def version(name: str) -> str | None:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return None

    info = {"device": opts.hw, "torch": version("torch"), "triton": version("triton"),
            "timing": "none: correctness only (the CPU interpreter is not a timing target)"}
    gpu = next((r["gpu"] for r in rows if r.get("gpu")), None)
    if gpu:  # what the evaluator recorded on the device, not this host's packages
        info.update(device=gpu.get("name"), torch=gpu.get("torch"), triton=gpu.get("triton"),
                    driver=gpu.get("driver_version"))
    if opts.simulate:
        info["timing"] = f"simulated {opts.hw} (cost model over counted memory traffic and instructions)"
    elif opts.hw != "cpu":
        info["timing"] = ("CUDA events, candidate, eager and torch.compile interleaved, L2 flushed, medians; "
                          "one process times at a time (device lock)")
    return info


def _write(report: dict, prefix: Path, html: bool = False) -> None:
    import json

    from kernelevolve.aten.matrix import markdown

    prefix.parent.mkdir(parents=True, exist_ok=True)
    stem = prefix.name.removesuffix(".json").removesuffix(".md")
    json_path, md_path = prefix.parent / f"{stem}.json", prefix.parent / f"{stem}.md"
    html_path = prefix.parent / f"{stem}.html"
    report["files"] = [str(json_path), str(md_path)] + ([str(html_path)] if html else [])
    try:
        json_path.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
        md_path.write_text(markdown(report), encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write the matrix to {prefix}: {exc.strerror or exc}") from None
    if html:  # the same view 'ke report MATRIX.json' renders
        from kernelevolve.cli.report_cmd import write_report
        from kernelevolve.report.build import sweep_report

        write_report(sweep_report({**report, "source": str(json_path)}), html_path, "html")
