"""The coverage matrix of an ATen sweep: one row per op on one target, built from the run store.

A row is correct only when its run holds a node that passed every case on fresh inputs (the evaluator's
rule; nothing here re-judges). Speedups and the fraction of the bandwidth floor come from the run's fresh
final re-measurement when it made one, else from the best node's own evaluation. Per op, the fraction of
floor is the median over its production cases; the summary's figure for bandwidth-bound ops is the median
over those ops, and its speedups are geometric means over the ops that were timed.
"""

from __future__ import annotations

import statistics
from typing import Any

from evaluators.result import geomean
from kernelevolve.aten.op import AtenOp
from kernelevolve.store.evaluations import authoritative_evaluation
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from kernelevolve.store.records import RunRecord


def coverage_row(meta: MetadataStore, objects: ObjectStore, op: AtenOp, run: RunRecord | None) -> dict[str, Any]:
    row: dict[str, Any] = {"op": op.name, "family": op.family, "category": op.category,
                           "bandwidth_bound": op.bandwidth_bound, "correct": False, "status": "not run",
                           "reason": "", "run_id": run.run_id if run else None, "node_id": None, "nodes": 0,
                           "speedup_vs_eager": None, "speedup_vs_compile": None, "fraction_of_floor": None,
                           "cases": []}
    if run is None:
        return row
    row["nodes"] = meta.count_nodes(run.run_id)
    best = meta.best_nodes(run.run_id, 1)
    if not best:
        failures = meta.failure_summary(run.run_id)
        if failures:
            status, _, reason = failures[0]
            row.update(status=status, reason=reason)
        else:
            row.update(status=run.status, reason="no node evaluated yet")
        return row
    node = best[0]
    evaluation, measured = authoritative_evaluation(meta, objects, run, node, best=True)
    cases = [{k: c.get(k) for k in ("name", "latency_ms", "eager_ms", "compile_ms", "floor_ms", "fraction_of_floor",
                                    "floor_flag")}
             for c in evaluation.get("cases", [])]
    fractions = [c["fraction_of_floor"] for c in cases if c.get("fraction_of_floor")]
    gpu = (evaluation.get("extra") or {}).get("gpu") or {}
    measured = measured if evaluation.get("timed") else None  # an untimed target has nothing to re-measure
    row.update(correct=True, status="ok", node_id=node.node_id, cases=cases, measured=measured,
               gpu={k: gpu.get(k) for k in ("name", "torch", "triton", "driver_version")} if gpu else None,
               timed=bool(evaluation.get("timed")), simulated=bool(evaluation.get("simulated")),
               speedup_vs_eager=evaluation.get("speedup_vs_eager"),
               speedup_vs_compile=evaluation.get("speedup_vs_compile"),
               fraction_of_floor=statistics.median(fractions) if fractions else None,
               floor_flag=worst_floor_flag(cases))
    if (evaluation.get("extra") or {}).get("fitness_withheld"):
        row["reason"] = evaluation["extra"]["fitness_withheld"]
    return row


FLOOR_MARKS = {"fewer_flops": "†", "under_launch": "§", "faster_than_bytes": "‡", "recorded_above": "*"}
FLOOR_LEGEND = {
    "fewer_flops": "† a case ran faster than the reference's FLOP count allows (less arithmetic, e.g. re-associated): "
                   "its floor is re-based on bytes and launch",
    "under_launch": "§ a case's GPU time was under the rated launch latency (a queued launch can be): its floor "
                    "keeps the bytes term",
    "faster_than_bytes": "‡ a case ran faster than its own inputs and outputs can move: the spec's bytes or the "
                         "timing is wrong, and the fitness is withheld until explained",
    "recorded_above": "* recorded above 1.0 of its floor by an evaluator older than 0.4.1, which did not tell these "
                      "kinds apart or withhold the fitness",
}


def worst_floor_flag(cases: list[dict[str, Any]]) -> str:
    """The flag a row carries: faster_than_bytes over fewer_flops over under_launch (evaluators/physics.py)."""
    flags = {c.get("floor_flag") or "" for c in cases}
    return next((f for f in ("faster_than_bytes", "fewer_flops", "under_launch") if f in flags), "")


def floor_cell(fraction: float | None, flag: str | None) -> str:
    """A fraction of the floor as a table shows it, marked when a case beat its stated floor."""
    return ("-" if fraction is None else f"{fraction:.2f}") + FLOOR_MARKS.get(flag or "", "")


def floor_legend(rows: list[dict[str, Any]]) -> list[str]:
    """The legend lines for the marks the rows carry (none when no case beat its floor)."""
    flags = {r.get("floor_flag") or "" for r in rows}
    return [FLOOR_LEGEND[f] for f in FLOOR_LEGEND if f in flags]


def merged_rows(meta: MetadataStore, objects: ObjectStore, fresh: dict[str, RunRecord],
                campaign_runs: dict[int, RunRecord]) -> list[dict[str, Any]]:
    """The matrix's rows, in suite order: this command's ops from ``fresh`` (op name -> its run), every other
    suite op from the campaign's newest run for its slot, where it has one. Why: ``--ops`` slices build one
    matrix between them; a later slice updates its own rows and keeps the others, as the store does."""
    from kernelevolve.aten.table import SUITE

    rows = []
    for slot, op in enumerate(SUITE):
        run = fresh.get(op.name, campaign_runs.get(slot))
        if op.name in fresh or run is not None:
            rows.append(coverage_row(meta, objects, op, run))
    return rows


def coverage(rows: list[dict[str, Any]], this_command: list[str]) -> dict[str, Any]:
    """Which suite ops the matrix covers, and which of them this command ran."""
    from kernelevolve.aten.table import SUITE

    covered = [r["op"] for r in rows]
    return {"suite": len(SUITE), "covered": covered, "missing": [op.name for op in SUITE if op.name not in covered],
            "this_command": this_command}


def _coverage_line(cov: dict[str, Any]) -> str:
    n, suite = len(cov["covered"]), cov["suite"]
    ran = cov["this_command"]
    shown = ", ".join(ran) if len(ran) <= 20 else ", ".join(ran[:20]) + f", ... ({len(ran) - 20} more)"
    text = f"- coverage: {n} of the {suite} suite ops" + ("" if n == suite else
                                                          f" ({suite - n} not run yet; see `coverage` in the JSON)")
    return text + f"; the latest command ran {len(ran)}: {shown}"


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    bandwidth = [r["fraction_of_floor"] for r in rows if r["correct"] and r["bandwidth_bound"]
                 and r["fraction_of_floor"]]
    by_family: dict[str, list[int]] = {}
    for r in rows:
        counts = by_family.setdefault(r["family"], [0, 0])
        counts[0] += int(r["correct"])
        counts[1] += 1
    return {
        "correct": sum(r["correct"] for r in rows), "total": len(rows),
        "geomean_speedup_vs_eager": geomean([r["speedup_vs_eager"] for r in rows if r["speedup_vs_eager"]]),
        "geomean_speedup_vs_compile": geomean([r["speedup_vs_compile"] for r in rows if r["speedup_vs_compile"]]),
        "median_fraction_of_floor_bandwidth_bound": statistics.median(bandwidth) if bandwidth else None,
        "bandwidth_bound_ops_timed": len(bandwidth),
        "by_family": {f: {"correct": c, "total": t} for f, (c, t) in sorted(by_family.items())},
    }


def _f(value: Any, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def markdown(report: dict[str, Any]) -> str:
    """The matrix as a markdown page: provenance, the summary, failures first, then every op."""
    s = report["summary"]
    lines = [f"# ATen coverage sweep on `{report['target']}`", "",
             f"- device: {report.get('device')}; torch {report.get('torch')}, triton {report.get('triton')}; "
             f"{report.get('date')}",
             f"- command: `{report.get('command')}`",
             f"- timing: {report.get('timing')}",
             f"- **{s['correct']}/{s['total']} correct**; geomean speedup vs eager "
             f"{_f(s['geomean_speedup_vs_eager'])}x, "
             f"vs torch.compile {_f(s['geomean_speedup_vs_compile'])}x; median fraction of the bandwidth floor "
             f"over {s['bandwidth_bound_ops_timed']} bandwidth-bound ops: "
             f"{_f(s['median_fraction_of_floor_bandwidth_bound'])}",
             "- by family: " + ", ".join(f"{f} {v['correct']}/{v['total']}" for f, v in s["by_family"].items()),
             *([_coverage_line(report["coverage"])] if report.get("coverage") else []),
             "", "| op | family | correct | status / reason | vs eager | vs compile | of floor | run |",
             "|---|---|---|---|---|---|---|---|"]
    ordered = sorted(report["ops"], key=lambda r: r["correct"])  # failures first: they are what to read
    for r in ordered:
        reason = r["status"] if r["correct"] else f"{r['status']}: {' '.join(str(r['reason']).split())[:160]}"
        reason = reason.replace("|", "\\|")
        lines.append(f"| {r['op']} | {r['family']} | {'yes' if r['correct'] else '**no**'} | {reason} | "
                     f"{_f(r['speedup_vs_eager'], suffix='x')} | {_f(r['speedup_vs_compile'], suffix='x')} | "
                     f"{floor_cell(r['fraction_of_floor'], r.get('floor_flag'))} | {r['run_id'] or '-'} |")
    legend = floor_legend(report["ops"])
    lines += ["", *legend, *([""] if legend else []), f"{s['correct']}/{s['total']} correct"]
    return "\n".join(lines) + "\n"
