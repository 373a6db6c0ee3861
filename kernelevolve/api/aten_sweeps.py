"""``aten_sweep``: the ATen coverage suite on one target, as a resumable campaign, ending in a matrix.

``ke aten-sweep`` is this plus printing; its ``--json`` output is the dict ``aten_sweep`` returns.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelevolve.api.checks import check_target, reject_unsupported
from kernelevolve.api.evaluation import MAX_SEEDS
from kernelevolve.api.progress import Progress
from kernelevolve.api.stores import checked_state, open_state
from kernelevolve.errors import UserError
from search.policy import STRATEGIES

# (label, ops in the sweep, ops already done) -> one display for the whole sweep, not one bar per op
SweepProgressFactory = Callable[[str, int, int], Progress]


def aten_sweep(hw: str, *, ops: str | None = None, budget: int = 1, strategy: str = "greedy", simulate: bool = False,
               concurrency: int = 1, operator: str = "offline", model: str | None = None,
               executor: str | None = None, ray_address: str | None = None, timeout_s: float = 120.0,
               out: str | None = None, html_report: bool = False, state_dir: str | None = None,
               store_url: str | None = None, command: str | None = None,
               progress: SweepProgressFactory | None = None, seeds: int | None = None) -> dict[str, Any]:
    """Run the ATen suite (or the ``ops`` globs of it) on ``hw``; running it again resumes. Writes the matrix
    (.json, .md, and .html with ``html_report``) and returns what ``ke aten-sweep --json`` prints: this
    call's ops, their ``summary`` (``correct``/``total``), ``failures``, and the whole matrix's summary.
    ``command`` is recorded in the matrix (default: this process's command line). ``seeds``: random input
    seeds each op's correctness is checked on (default 3; fewer: a quicker sweep, which a later default sweep
    does not reuse)."""
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.aten.matrix import summarize
    from kernelevolve.aten.sweep import SweepOptions, select_ops
    from kernelevolve.execution import check_executor, default_executor, open_execution, ray_address_for
    from kernelevolve.inputs import output_file

    if budget < 1:
        raise UserError(f"--budget must be at least 1, got {budget}")
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        raise UserError(f"--seeds must be between 1 and {MAX_SEEDS}, got {seeds}")
    reject_unsupported(concurrency, operator, model, None)
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
                        timeout_s=timeout_s, concurrency=concurrency, executor=executor, operator=operator,
                        model=model, check_seeds=seeds)
    paths = checked_state(state_dir, store_url)
    out_prefix = output_file(out, "matrix", "--out") if out else paths.root / f"aten_sweep_{hw}"

    def start_execution():  # only once the plan holds work: a finished sweep never starts Ray
        return open_execution(executor, ray_address, [hw], concurrency, paths.scratch)

    report, failures = _sweep(selected, opts, start_execution, state_dir, store_url, progress)
    report["command"] = command or shlex.join(["python3", *sys.argv])
    _write(report, out_prefix, html_report)
    # what this call ran; the files hold the whole matrix, earlier ops slices included
    names = {op.name for op in selected}
    ran = [row for row in report["ops"] if row["op"] in names]
    summary = summarize(ran)
    return {"target": hw, "correct": summary["correct"], "total": summary["total"],
            "summary": summary, "files": report["files"], "ops": ran, "failures": failures,
            "matrix": {"summary": report["summary"], "coverage": report["coverage"]}}


def _sweep(selected, opts, start_execution, state_dir, store_url, progress) -> tuple[dict, list]:
    """Plan first (stale, changed or finished runs are sorted out from the store alone), then start the
    executor only for what is left, and close it before anything is printed (Ray lends stdout to stderr)."""
    from kernelevolve.api.progress import Silent
    from kernelevolve.aten.matrix import coverage, merged_rows, summarize
    from kernelevolve.aten.sweep import plan_sweep
    from kernelevolve.run_setup import drive

    paths, meta, objects = open_state(state_dir, store_url, create=True)
    plan = plan_sweep(meta, objects, selected, opts, paths.root / "aten" / "specs")
    # started before the progress board, whose display would swallow the executor's own log lines
    execution = start_execution() if plan.to_drive else None
    failures: list = []
    try:
        label, done = f"aten-sweep {opts.hw}", len(selected) - len(plan.to_drive)
        display = progress(label, len(selected), done) if progress is not None else Silent()
        display.note(f"aten-sweep on {opts.hw} [{opts.campaign_name}, campaign {plan.campaign_id}]: "
                     f"{len(selected)} ops; {plan.reused} already done, {plan.resumed} resumed, {plan.created} "
                     f"new; {opts.concurrency} in flight on {opts.executor}")
        try:
            if execution is not None:
                _, failures = drive(plan.to_drive, meta, objects, execution, opts.concurrency, display.track)
        finally:
            display.close()
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
        from kernelevolve.api.exports import write_report
        from kernelevolve.report.build import sweep_report

        write_report(sweep_report({**report, "source": str(json_path)}), html_path, "html")
