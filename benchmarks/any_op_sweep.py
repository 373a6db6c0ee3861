"""The any-op sweep: every problem of the project's own corpus (benchmarks/any_op/) searched offline on one
target, as one resumable campaign, then a coverage matrix per level.

  python3 benchmarks/any_op_sweep.py --hw cpu --budget 4 --concurrency 2 --state-dir /tmp/anyop-cpu \
      --write benchmarks/results/any_op_cpu

A problem counts as correct only when its run holds a node that passed every case on fresh inputs (the
evaluator's rule, read from the store by the ATen sweep's `coverage_row`); a problem whose operator failed (no
lowering for one of its ops) shows that one-line reason. Running the same command again resumes the campaign.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "any_op"
GOALS = {"level1": 0.95, "level2": 0.85, "level3": 0.60}  # issue #16's coverage bar per level


@dataclass(frozen=True)
class Problem:
    """What `coverage_row` reads of an op: a name, a family (here the level) and a category."""

    name: str
    family: str
    category: str = "any-op"
    bandwidth_bound: bool = False


def problems(only: str | None, corpus: Path = CORPUS) -> list[Path]:
    files = sorted(corpus.glob("level*/*.py"))
    if only:
        files = [f for f in files if any(fnmatch.fnmatch(f"{f.parent.name}/{f.stem}", p) for p in only.split(","))]
    return files


def write_campaign(files: list[Path], args: argparse.Namespace, folder: Path) -> Path:
    name = f"any-op@{args.hw}-b{args.budget}" + (f"-{args.only}" if args.only else "")
    lines = [f"name = {json.dumps(name)}", f"concurrency = {args.concurrency}", 'executor = "local"', "",
             "[defaults]", f"budget = {args.budget}", "reuse = false", f"timeout = {args.timeout}", ""]
    for f in files:
        lines += ["[[runs]]", f"op = {json.dumps(str(f))}", f"hw = {json.dumps(args.hw)}", ""]
    path = folder / "any_op_campaign.toml"
    path.write_text("\n".join(lines))
    return path


def matrix(state_dir: Path, files: list[Path]) -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from kernelevolve.aten.matrix import coverage_row
    from kernelevolve.state import resolve_state
    from kernelevolve.store.metadata import MetadataStore
    from kernelevolve.store.objects import ObjectStore

    paths = resolve_state(str(state_dir), None)
    meta, objects = MetadataStore(paths.db_path), ObjectStore(paths.store_url)
    runs = {}
    # newest first: the first run of a problem is its latest. Matched on levelN/file, not the whole path: a state
    # made on a device (from a snapshot of the tree elsewhere) is read back here
    for run in meta.list_runs():
        runs.setdefault(Path(run.op_path).parts[-2:], run)
    rows = []
    for f in files:
        run = runs.get(f.parts[-2:])
        row = coverage_row(meta, objects, Problem(f"{f.parent.name}/{f.stem}", f.parent.name), run)
        if run is not None and run.status == "failed" and not row["correct"]:
            row.update(status="failed", reason=str((run.config or {}).get("failure", "")))
        row["shrunk"] = _shrunk(objects, run)
        rows.append(row)
    return rows


LOSSES = {"out of memory": ("out of memory",), "harness": ("evaluator error", "harness", "fork server", "worker died",
                                                          "slot lost")}


def node_tally(state_dir: Path, files: list[Path]) -> dict[str, Any]:
    """Every node of the sweep's runs by status, and the nodes lost to device memory or to the harness (their
    reason names it): the count issue #28 asks to be zero at published sizes."""
    from kernelevolve.state import resolve_state
    from kernelevolve.store.metadata import MetadataStore

    meta = MetadataStore(resolve_state(str(state_dir), None).db_path)
    wanted = {f.parts[-2:] for f in files}
    statuses: dict[str, int] = {}
    lost: dict[str, list[str]] = {name: [] for name in LOSSES}
    for run in meta.list_runs():
        if Path(run.op_path).parts[-2:] not in wanted:
            continue
        for node in meta.nodes(run.run_id):
            statuses[node.status] = statuses.get(node.status, 0) + 1
            reason = (node.reason or "").lower()
            for name, marks in LOSSES.items():
                if any(mark in reason for mark in marks):
                    lost[name].append(f"{Path(run.op_path).parent.name}/{Path(run.op_path).stem}#{node.node_id}: "
                                      f"{' '.join((node.reason or '').split())[:160]}")
    return {"nodes": sum(statuses.values()), "statuses": statuses, "lost": lost}


def shard(files: list[Path], which: str | None) -> list[Path]:
    """``i/n``: every n-th problem from i (problems in file order), for one sweep per GPU of a host."""
    if not which:
        return files
    i, n = (int(x) for x in which.split("/"))
    return files[i::n]


def merged(paths: list[Path]) -> dict[str, Any]:
    """Several shards' reports as one: rows and node tallies joined, the summary recomputed."""
    reports = [json.loads(p.read_text()) for p in paths]
    rows = sorted((r for rep in reports for r in rep["rows"]), key=lambda r: r["op"])
    tally: dict[str, Any] = {"nodes": 0, "statuses": {}, "lost": {name: [] for name in LOSSES}}
    for rep in reports:
        part = rep.get("tally") or {}
        tally["nodes"] += part.get("nodes", 0)
        for status, n in (part.get("statuses") or {}).items():
            tally["statuses"][status] = tally["statuses"].get(status, 0) + n
        for name, items in (part.get("lost") or {}).items():
            tally["lost"].setdefault(name, []).extend(items)
    first = reports[0]
    return {**first, "seconds": max(r["seconds"] for r in reports), "levels": summary(rows), "rows": rows,
            "tally": tally, "shards": len(reports),
            "command": " ; ".join(sorted({r["command"] for r in reports}))}


def _shrunk(objects: Any, run: Any) -> dict | None:
    """The production sizes the cpu interpreter's test inputs were shrunk from (the run's first evaluation)."""
    if run is None:
        return None
    if (run.config or {}).get("shrunk"):
        return run.config["shrunk"]
    ref = objects.node_prefix(run.run_id, 1) + "evaluation.json"
    return ((objects.get_json(ref).get("extra") or {}).get("shrunk") or None) if objects.exists(ref) else None


def _device(hw: str) -> str:
    """The GPU and library versions the sweep ran with (the target name on a host without a GPU)."""
    import torch
    import triton

    name = torch.cuda.get_device_name() if torch.cuda.is_available() else hw
    return f"{name}, torch {torch.__version__}, triton {triton.__version__}"


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from evaluators.result import geomean

    levels = {}
    for level in sorted({r["family"] for r in rows}):
        mine = [r for r in rows if r["family"] == level]
        correct = sum(r["correct"] for r in mine)
        eager = [r["speedup_vs_eager"] for r in mine if r.get("speedup_vs_eager")]
        compiled = [r["speedup_vs_compile"] for r in mine if r.get("speedup_vs_compile")]
        floors = [r["fraction_of_floor"] for r in mine if r.get("fraction_of_floor")]
        levels[level] = {"correct": correct, "total": len(mine), "rate": round(correct / len(mine), 3),
                         "goal": GOALS.get(level), "geomean_vs_eager": geomean(eager) if eager else None,
                         "geomean_vs_compile": geomean(compiled) if compiled else None,
                         "median_fraction_of_floor": statistics.median(floors) if floors else None}
    return levels


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Any-op sweep on {report['hw']} (offline operator, budget {report['budget']})", "",
             f"{report['date']}, commit {report['commit']}, {report['seconds']:.0f} s: `{report['command']}`", "",
             f"Device: {report.get('device') or report['hw']}. Speedups are the best correct node's, from its final "
             "re-measurement (interleaved, L2 flushed, medians; compile = a static `torch.compile` per case); "
             "floor = minimal bytes / rated bandwidth or FLOPs / peak, whichever is larger.", "",
             "| level | correct | rate | goal | geomean vs eager | geomean vs compile | median of floor |",
             "|---|---|---|---|---|---|---|"]
    for level, s in report["levels"].items():
        fmt = (lambda v: f"{v:.2f}x" if v else "-")  # noqa: E731
        floor = s.get("median_fraction_of_floor")
        lines.append(f"| {level} | {s['correct']}/{s['total']} | {s['rate']:.0%} | {s['goal']:.0%} | "
                     f"{fmt(s['geomean_vs_eager'])} | {fmt(s['geomean_vs_compile'])} | "
                     f"{f'{floor:.2f}' if floor else '-'} |")
    tally = report.get("tally")
    if tally:
        statuses = ", ".join(f"{n} {status}" for status, n in sorted(tally["statuses"].items(), key=lambda x: -x[1]))
        lines += ["", f"**Nodes: {tally['nodes']}** ({statuses}). Lost to device memory: "
                  f"{len(tally['lost'].get('out of memory', []))}; to the harness: "
                  f"{len(tally['lost'].get('harness', []))}."]
        for name, items in tally["lost"].items():
            lines += [f"- {name}: {item}" for item in items[:20]]
    search = [r["op"] for r in report["rows"] if r.get("measured") == "search"]
    if search:
        lines += ["", f"**{len(search)} of {len(report['rows'])} runs have no final re-measurement yet** (stopped "
                  "or still running): their figures are the best node's own search-time evaluation, marked "
                  "`search` below."]
    lines += ["", "| problem | status | nodes | measured | vs eager | vs compile | of floor | reason |",
              "|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        fmt = (lambda v: f"{v:.2f}x" if v else "-")  # noqa: E731
        reason = " ".join(str(r.get("reason") or "").split())[:160].replace("|", "/")
        floor = r.get("fraction_of_floor")
        lines.append(f"| {r['op']} | {r['status']} | {r['nodes']} | {r.get('measured') or '-'} | "
                     f"{fmt(r.get('speedup_vs_eager'))} | "
                     f"{fmt(r.get('speedup_vs_compile'))} | {f'{floor:.2f}' if floor else '-'} | {reason} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hw", default="cpu")
    parser.add_argument("--budget", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0, help="per-phase evaluation timeout (s)")
    parser.add_argument("--only", default=None, help="comma-separated globs over 'levelN/stem'")
    parser.add_argument("--corpus", type=Path, default=CORPUS,
                        help="a folder of level*/ problem files (default: the project's own corpus); e.g. a copy "
                             "of ../shared/kernelbench, read as data")
    parser.add_argument("--state-dir", type=Path)
    parser.add_argument("--write", default=None, help="output prefix for .json and .md")
    parser.add_argument("--matrix-only", action="store_true", help="rebuild the matrix from the store, run nothing")
    parser.add_argument("--shard", default=None, help="i/n: this sweep's share of the problems (one per GPU)")
    parser.add_argument("--merge", nargs="+", type=Path, help="shard reports (.json) to join; runs nothing")
    args = parser.parse_args()
    if args.merge:
        report = merged(args.merge)
        text = markdown(report)
        if args.write:
            Path(args.write + ".json").write_text(json.dumps(report, indent=1) + "\n")
            Path(args.write + ".md").write_text(text)
        print(text)
        return
    files = shard(problems(args.only, args.corpus.resolve()), args.shard)
    if args.state_dir is None:
        parser.error("--state-dir is required unless --merge is given")
    args.state_dir.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "kernelevolve.cli.main", "campaign",
               str(write_campaign(files, args, args.state_dir)), "--state-dir", str(args.state_dir)]
    started = time.time()
    if not args.matrix_only:
        proc = subprocess.run(command, cwd=ROOT)
        print(f"campaign exited {proc.returncode}", file=sys.stderr)
    rows = matrix(args.state_dir, files)
    # KE_COMMIT from the caller: a device's copy of the tree can carry a stale git HEAD
    commit = os.environ.get("KE_COMMIT") or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                                           capture_output=True, text=True).stdout
    report = {"hw": args.hw, "budget": args.budget, "date": dt.datetime.now(dt.timezone.utc).isoformat("T", "seconds"),
              "commit": commit.strip(), "seconds": time.time() - started,
              "command": "python3 benchmarks/any_op_sweep.py " + " ".join(sys.argv[1:]),
              "device": _device(args.hw), "levels": summary(rows), "rows": rows,
              "tally": node_tally(args.state_dir, files)}
    text = markdown(report)
    if args.write:
        Path(args.write + ".json").write_text(json.dumps(report, indent=1) + "\n")
        Path(args.write + ".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
