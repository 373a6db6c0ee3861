"""``sweep``: every KernelBench-format problem under a folder as one resumable campaign, ending in a matrix per
level (correct rate, fast_p against eager and torch.compile, geomeans, fraction of the floor).

It plans with ``kernelevolve.campaign.build_plan`` and runs with ``campaigns.run_plan``, in this process, so a
sweep resumes exactly as a campaign does; re-running a finished sweep starts no executor and only rewrites the
matrix. A problem that ends without a correct kernel is a row of the matrix, not an error.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kernelevolve.api.progress import Progress
from kernelevolve.api.stores import checked_state, open_state
from kernelevolve.errors import UserError
from search.policy import STRATEGIES


def sweep(paths: Sequence[str], *, hw: str | None = None, budget: int = 4, strategy: str = "greedy",
          concurrency: int = 1, executor: str | None = None, ray_address: str | None = None,
          timeout_s: float = 120.0, only: str | None = None, shard: str | None = None, out: str | None = None,
          matrix_only: bool = False, merge: bool = False, name: str | None = None, retry_failed: bool = False,
          state_dir: str | None = None, store_url: str | None = None, command: str | None = None,
          progress: Callable[[], Progress] | None = None) -> dict[str, Any]:
    """Search every problem under ``paths[0]`` (DIR/levelN/*.py) as one campaign and write the matrix; with
    ``merge``, ``paths`` are shard reports (.json) joined into one, and nothing runs. Options mirror ``ke
    sweep``'s. Returns the report with ``files`` (what ``--json`` prints); ``report["finished"]`` is False while
    some problem has no verdict yet (``ke sweep`` then exits 1). ``command`` is recorded in the report
    (default: this process's command line)."""
    from kernelevolve.inputs import output_file
    from kernelevolve.sweep import matrix

    if merge:
        if not paths:
            raise UserError("--merge needs the shard reports to join (ke sweep --merge A.json B.json ...)")
        report = matrix.merged([matrix.load_report(Path(p)) for p in paths])
        files = matrix.write(report, output_file(out, "matrix", "--out")) if out else []
        return {**report, "files": files}
    root, problems = _checked(paths, hw, budget, strategy, concurrency, timeout_s, only, shard)
    paths_ = checked_state(state_dir, store_url)
    prefix = output_file(out, "matrix", "--out") if out else paths_.root / f"sweep_{hw}"
    started = time.time()
    campaign = None
    unloadable = _unloadable(problems)  # a verdict of their own: one such file never stops the whole sweep
    if not matrix_only and len(unloadable) < len(problems):
        from kernelevolve.api.campaigns import run_plan
        from kernelevolve.campaign import build_plan

        entries = [{"op": str(p.path), "hw": hw, "strategy": strategy, "budget": budget, "timeout": timeout_s,
                    "reuse": False} for p in problems if p.name not in unloadable]
        plan = build_plan(str(root), name or campaign_name(root, hw, budget, strategy, only, shard), entries,
                          concurrency, executor, ray_address)
        try:
            summary = run_plan(plan, {"kind": "sweep", "dir": str(root)}, executor, ray_address, concurrency,
                               state_dir, store_url, retry_failed=retry_failed, progress=progress)
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
        "campaign": campaign, "seconds": time.time() - started,
        "command": command or shlex.join(["python3", *sys.argv])})
    # every problem has its verdict (the campaign itself says "incomplete" while a run is failed: ke campaign's word)
    report["finished"] = all(_settled(r) for r in rows)
    files = matrix.write(report, prefix)
    return {**report, "files": files}


def summary_lines(result: dict[str, Any]) -> list[str]:
    """The human summary of a sweep's result (``ke sweep`` without ``--json``): each problem without a correct
    kernel, each level's tally, the matrix files, the total. Kept here so every caller words it the same."""
    rows = result["rows"]
    lines = [f"  {r['op']}: {r['status']}: {' '.join(str(r.get('reason') or '').split())[:200]}"
             for r in rows if not r["correct"]]
    for level, s in result["levels"].items():
        fast = (s.get("fast_p") or {}).get("compile") or {}
        f1 = fast.get("1")
        lines.append(f"{level}: {s['correct']}/{s['total']} correct"
                     + ("" if f1 is None else f", fast_1 vs compile {f1:.0%}"))
    files = result["files"]
    if files:
        lines.append(f"matrix: {files[0]} and {files[1]}")
    lines.append(f"{sum(bool(r['correct']) for r in rows)}/{len(rows)} correct")
    return lines


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
