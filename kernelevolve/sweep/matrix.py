"""A sweep's matrix from the store: a row per problem (``coverage_row``, the ATen sweep's), the per-level
figures (``metrics``), the node tally, provenance; shard reports joined; the JSON and markdown written.

Rows are matched to runs on ``level/file`` and the target, not on the whole path: a state made on a device from
a snapshot of the tree elsewhere is read back here, and the newest run of a problem is its row.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from kernelevolve.errors import UserError
from kernelevolve.store import layout
from kernelevolve.sweep.metrics import by_level
from kernelevolve.sweep.problems import Problem

# issue #29's correct-rate goals per level, offline: on one GPU, and on the cpu interpreter
GPU_GOALS = {"level1": 0.97, "level2": 0.95, "level3": 0.80}
CPU_GOALS = {"level1": 0.98, "level2": 0.95, "level3": 0.85}


def goals(hw: str | None, rows: list[dict[str, Any]] | None = None) -> dict[str, float]:
    """The correct-rate goal of each level on ``hw`` (the cpu interpreter's are higher: nothing is timed). The
    issue sets none for a simulated target: its estimates are not the GPU's measurements."""
    if any(r.get("simulated") for r in rows or []):
        return {}
    return CPU_GOALS if hw == "cpu" else GPU_GOALS


LOSSES = {"out of memory": ("out of memory",),
          "harness": ("evaluator error", "harness", "fork server", "worker died", "slot lost")}
REPORT_KEYS = ("hw", "levels", "rows")


def _key(op_path: str) -> tuple[str, ...]:
    return Path(op_path).parts[-2:]


def newest_runs(meta: Any, problems: list[Problem], hw: str, campaign_id: str | None = None
                ) -> dict[tuple[str, ...], Any]:
    """Each problem's run: its slot's in the sweep's campaign when given (slots follow the problems' order),
    else the newest run of the problem on ``hw`` (list_runs is newest first): ``--matrix-only``, a copy."""
    if campaign_id is not None:
        by_slot = meta.campaign_runs(campaign_id)
        return {_key(str(p.path)): by_slot[slot] for slot, p in enumerate(problems) if slot in by_slot}
    wanted = {_key(str(p.path)) for p in problems}
    runs: dict[tuple[str, ...], Any] = {}
    for run in meta.list_runs():
        if run.hw == hw and _key(run.op_path) in wanted:
            runs.setdefault(_key(run.op_path), run)
    return runs


def rows_from_store(meta: Any, objects: Any, problems: list[Problem], runs: dict[tuple[str, ...], Any]
                    ) -> list[dict[str, Any]]:
    """A row per problem (``runs`` from ``newest_runs``), in problem order; a run the orchestrator failed shows
    its one-line reason."""
    from kernelevolve.aten.matrix import coverage_row

    rows = []
    for problem in problems:
        run = runs.get(_key(str(problem.path)))
        row = coverage_row(meta, objects, problem, run)
        if run is not None and run.status == "failed" and not row["correct"]:
            row.update(status="failed", reason=str((run.config or {}).get("failure", "")))
        row["run_status"] = run.status if run is not None else None
        row["shrunk"] = _shrunk(objects, run)
        rows.append(row)
    return rows


def _shrunk(objects: Any, run: Any) -> dict | None:
    """The production sizes the cpu interpreter's test inputs were shrunk from (the run's first evaluation)."""
    if run is None:
        return None
    if (run.config or {}).get("shrunk"):
        return run.config["shrunk"]
    ref = layout.evaluation_key(run.run_id, 1)
    return ((objects.get_json(ref).get("extra") or {}).get("shrunk") or None) if objects.exists(ref) else None


def node_tally(meta: Any, runs: dict[tuple[str, ...], Any]) -> dict[str, Any]:
    """Every node of the sweep's runs by status, and the nodes lost to device memory or to the harness (their
    reason names it): the count issue #28 asks to be zero at published sizes."""
    statuses: dict[str, int] = {}
    lost: dict[str, list[str]] = {name: [] for name in LOSSES}
    for run in runs.values():
        for node in meta.nodes(run.run_id):
            statuses[node.status] = statuses.get(node.status, 0) + 1
            reason = (node.reason or "").lower()
            for name, marks in LOSSES.items():
                if any(mark in reason for mark in marks):
                    lost[name].append(f"{Path(run.op_path).parent.name}/{Path(run.op_path).stem}#{node.node_id}: "
                                      f"{' '.join((node.reason or '').split())[:160]}")
    return {"nodes": sum(statuses.values()), "statuses": statuses, "lost": lost}


def commit() -> str:
    """KE_COMMIT from the caller (a device's copy of the tree can carry a stale git HEAD), else git's."""
    if os.environ.get("KE_COMMIT"):
        return os.environ["KE_COMMIT"].strip()
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parents[2],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def provenance(rows: list[dict[str, Any]], hw: str) -> dict[str, Any]:
    """Device, torch and triton: the evaluator's own record where a row was timed on a GPU, else this host's."""
    import importlib.metadata as md

    gpu = next((r["gpu"] for r in rows if r.get("gpu")), None)
    if gpu:
        return {"device": gpu.get("name"), "torch": gpu.get("torch"), "triton": gpu.get("triton"),
                "driver": gpu.get("driver_version")}
    info: dict[str, Any] = {"device": hw}
    for name in ("torch", "triton"):
        try:
            info[name] = md.version(name)
        except md.PackageNotFoundError:
            info[name] = None
    if hw == "cpu":
        info["device"] = "cpu (Triton interpreter; correctness only, untimed)"
    return info


def build_report(rows: list[dict[str, Any]], tally: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """The matrix: ``facts`` (hw, budget, strategy, command, seconds, campaign ...) with provenance and figures."""
    from kernelevolve.sweep.markdown import REFERENCES

    return {**facts, "date": dt.datetime.now(dt.timezone.utc).isoformat("T", "seconds"), "commit": commit(),
            **provenance(rows, facts["hw"]), "offline": True, "levels": by_level(rows, goals(facts["hw"], rows)),
            "overall": by_level([{**r, "family": "all"} for r in rows]).get("all"), "rows": rows, "tally": tally,
            "references": REFERENCES}


def load_report(path: Path) -> dict[str, Any]:
    """A sweep matrix JSON (``ke sweep`` or benchmarks/any_op_sweep.py wrote it); anything else is bad input."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
    if not is_report(data):
        raise UserError(f"{path} is not a sweep matrix (needs {', '.join(REPORT_KEYS)}; 'ke sweep' writes one)")
    return data


def is_report(data: Any) -> bool:
    return isinstance(data, dict) and all(k in data for k in REPORT_KEYS) and isinstance(data["rows"], list)


def merged(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Several shards' reports as one: rows and node tallies joined, the figures recomputed from the rows. A
    problem in more than one report (a re-run of failures) takes its row from the last report given; the
    ones replaced are listed under ``superseded``."""
    by_op: dict[str, dict[str, Any]] = {}
    superseded: list[str] = []
    for rep in reports:
        for r in rep["rows"]:
            if r["op"] in by_op:
                superseded.append(r["op"])
            by_op[r["op"]] = r
    rows = sorted(by_op.values(), key=lambda r: r["op"])
    tally: dict[str, Any] = {"nodes": 0, "statuses": {}, "lost": {name: [] for name in LOSSES}}
    for rep in reports:
        part = rep.get("tally") or {}
        tally["nodes"] += part.get("nodes", 0)
        for status, n in (part.get("statuses") or {}).items():
            tally["statuses"][status] = tally["statuses"].get(status, 0) + n
        for name, items in (part.get("lost") or {}).items():
            tally["lost"].setdefault(name, []).extend(items)
    first, runs = reports[0], _runs(reports)
    return {**first, "seconds": sum(run["seconds"] for run in runs), "runs": runs,
            "levels": by_level(rows, goals(first.get("hw"), rows)),
            "overall": by_level([{**r, "family": "all"} for r in rows]).get("all"), "rows": rows, "tally": tally,
            "shards": len(reports), "command": " ; ".join(sorted({str(r.get("command")) for r in reports})),
            "superseded": sorted(set(superseded))}


def _runs(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The separate runs behind shard reports, so that a merge of, say, one level's run with another's keeps
    each one's commit, date and command: shards of one run share commit, selection, target and budget (they
    ran side by side, so the run took its slowest shard's time); separate runs add up."""
    grouped: dict[tuple, dict[str, Any]] = {}
    for rep in reports:
        for run in rep.get("runs") or [rep]:
            key = (run.get("commit"), str(run.get("only")), run.get("hw"), run.get("budget"))
            seen = grouped.setdefault(key, {"commit": run.get("commit"), "only": run.get("only"), "hw": run.get("hw"),
                                            "budget": run.get("budget"), "date": run.get("date"), "seconds": 0.0,
                                            "commands": []})
            seen["date"] = min(str(seen["date"]), str(run.get("date")))
            seen["seconds"] = max(seen["seconds"], float(run.get("seconds") or 0))
            commands = run.get("commands") or [str(run.get("command"))]
            seen["commands"] = sorted(set(seen["commands"]) | set(commands))
    return sorted(grouped.values(), key=lambda run: run["date"])


def write(report: dict[str, Any], prefix: Path) -> list[str]:
    """``prefix``.json and .md (a .json or .md suffix given is dropped); their paths."""
    from kernelevolve.sweep.markdown import markdown

    stem = prefix.name.removesuffix(".json").removesuffix(".md")
    json_path, md_path = prefix.parent / f"{stem}.json", prefix.parent / f"{stem}.md"
    files = [str(json_path), str(md_path)]
    try:
        prefix.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps({**report, "files": files}, indent=1, default=str) + "\n", encoding="utf-8")
        md_path.write_text(markdown(report), encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write the matrix to {prefix}: {exc.strerror or exc}") from None
    return files
