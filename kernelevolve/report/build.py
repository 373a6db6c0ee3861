"""What goes into each kind of report, and which stored thing a ``ke report`` argument names.

An argument is, in this order: a matrix JSON file (``ke sweep``'s or ``ke aten-sweep``'s, told apart by their
keys; no store needed), a run id or unique prefix, a
campaign name, a campaign id. A campaign of kind ``aten-sweep`` gets the sweep report, rebuilt from its runs.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kernelevolve.report.campaign_data import CampaignData, find_campaign, load_campaign
from kernelevolve.report.campaign_view import campaign_table, strategies_figure
from kernelevolve.report.cases_view import cases_figure, cases_table, floor_figure, timed_cases
from kernelevolve.report.cost_view import cost_figure
from kernelevolve.report.page import NamedFigure, Report, Section, Table
from kernelevolve.report.problem_sweep_view import problem_sweep_report
from kernelevolve.report.run_data import RunData, load_run
from kernelevolve.report.style import fmt
from kernelevolve.report.sweep_data import load_matrix_file, matrix_from_store, problem_sweep_file
from kernelevolve.report.sweep_view import coverage_figure, failures_table, has_speedups, speedup_figure
from kernelevolve.report.trajectory_view import trajectory_figure
from kernelevolve.report.tree_view import node_payload, tree_figure


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if ts else "-"


def run_report(data: RunData) -> Report:
    run, best = data.run, data.best
    facts = [("op", run.op), ("target", run.hw + (" (simulated)" if run.simulated else "")),
             ("strategy", run.strategy), ("operator", run.operator), ("seed", str(run.seed)),
             ("status", run.status), ("nodes", f"{len(data.nodes)}/{run.budget}"),
             ("best", "none correct yet" if best is None else
              f"node {best.node_id}, fitness {best.fitness:.3f}"),
             ("created", _when(run.created_at)), ("updated", _when(run.updated_at))]
    # the headline speedups: the fresh final re-measurement where the run made one (no selection bias)
    final = data.best_evaluation if data.best_evaluation_source == "final re-measurement" else None
    source = final or (best.__dict__ if best is not None else {})
    note = " (re-measured)" if final else ""
    for key, label in (("speedup_vs_eager", "vs eager"), ("speedup_vs_compile", "vs torch.compile")):
        if source.get(key) is not None:
            facts.append((label, f"{source[key]:.2f}x{note}"))
    gpu = ((data.best_evaluation or {}).get("extra") or {}).get("gpu") or {}
    if gpu.get("name"):  # where the numbers were measured, as the evaluator recorded it
        facts.append(("device", f"{gpu['name']}, torch {gpu.get('torch')}, triton {gpu.get('triton')}"))
    search = Section("Search", [
        NamedFigure("tree", tree_figure(data), "Nodes coloured by status and sized by fitness; click one for its "
                    "code, reason, evaluation and overview.md."),
        NamedFigure("trajectory", trajectory_figure(data), "Fitness of each node in the order it was stored; the "
                    "line is the best so far; failed nodes (x) sit at 0; the shaded band is the draft phase "
                    "(children of the root). Fitness is the geometric mean over the production cases.")])
    sections = [search]
    if run.status == "running":
        search.items.insert(0, "This run is still in progress: the report shows the state so far.")
    cases = Section("Per-case performance of the best node")
    if best is not None and timed_cases(data.best_evaluation):
        cases.items.append(NamedFigure("cases", cases_figure(data.best_evaluation, best.node_id,
                                                             data.best_evaluation_source)))
        headers, rows = cases_table(data.best_evaluation)
        cases.items.append(Table("Speedups with spreads", headers, rows,
                                 "Spread: the speedup at the candidate's median +- half its IQR."))
        if any(c.get("fraction_of_floor") for c in timed_cases(data.best_evaluation)):
            cases.items.append(NamedFigure("floor", floor_figure(data.best_evaluation)))
    elif best is None:
        cases.items.append("No correct node yet, so nothing to time.")
    else:
        cases.items.append(f"Node {best.node_id} has no per-case timings: the '{run.hw}' target checks correctness "
                           "only (the CPU interpreter is not a timing target).")
    sections.append(cases)
    if data.has_llm_usage:
        sections.append(Section("LLM usage", [NamedFigure("cost", cost_figure(data))]))
    failures: dict[str, int] = {}
    for n in data.nodes:
        if n.is_buggy:
            failures[n.status] = failures.get(n.status, 0) + 1
    if failures:
        sections.append(Section("Failures", [Table("Failed nodes by status", ["status", "nodes"],
                                                   [[k, str(v)] for k, v in sorted(failures.items())])]))
    return Report("run", f"Run {run.run_id}: {run.op} on {run.hw}", facts, sections, node_payload(data),
                  best.node_id if best else (data.nodes[-1].node_id if data.nodes else None), len(data.nodes))


def campaign_report(data: CampaignData) -> Report:
    done = sum(r.run.status == "completed" for r in data.runs)
    facts = [("campaign", f"{data.name} [{data.campaign_id}]"), ("status", data.status),
             ("runs", f"{len(data.runs)} ({done} completed)"),
             ("strategies", ", ".join(sorted({r.run.strategy for r in data.runs})) or "-"),
             ("evaluations", str(sum(len(r.fitness) for r in data.runs)))]
    headers, rows = campaign_table(data)
    sections = [Section("Strategies", [NamedFigure("strategies", strategies_figure(data))]),
                Section("Runs", [Table("A row per run", headers, rows)])]
    return Report("campaign", f"Campaign {data.name}", facts, sections)


def sweep_report(matrix: dict[str, Any]) -> Report:
    s = matrix["summary"]
    facts = [("target", str(matrix["target"]) + (" (simulated)" if matrix.get("simulated") else "")),
             ("correct", f"{s['correct']}/{s['total']}"),
             ("geomean vs eager", fmt(s.get("geomean_speedup_vs_eager"), suffix="x")),
             ("geomean vs torch.compile", fmt(s.get("geomean_speedup_vs_compile"), suffix="x")),
             ("median of floor (bandwidth-bound)", fmt(s.get("median_fraction_of_floor_bandwidth_bound"))),
             ("source", str(matrix.get("source", "-")))]
    for key in ("device", "torch", "triton", "date"):
        if matrix.get(key):
            facts.append((key, str(matrix[key])))
    coverage = Section("Coverage", [NamedFigure("coverage", coverage_figure(matrix), "One cell per op; hover for "
                                                "its status, speedups and run.", image_width=1500)])
    if has_speedups(matrix):
        coverage.items.append(NamedFigure("speedups", speedup_figure(matrix)))
    else:
        coverage.items.append("No speedups: this target checks correctness only.")
    headers, rows = failures_table(matrix)
    sections = [coverage, Section("Failures", [Table(f"{len(rows)} failed op(s)", headers, rows)] if rows
                                  else ["Every op is correct."])]
    if matrix.get("timing"):
        coverage.items.insert(0, f"Timing: {matrix['timing']}")
    return Report("sweep", f"ATen sweep on {matrix['target']}", facts, sections)


def resolve(ref: str, open_stores) -> Report:
    """The report a ``ke report`` argument names; ``open_stores()`` -> (meta, objects), called only if needed."""
    from kernelevolve.errors import UserError

    path = Path(ref)
    if ref.endswith(".json") or path.is_file():
        if not path.is_file():
            raise UserError(f"{ref} does not exist")
        problems = problem_sweep_file(path)
        return problem_sweep_report(problems) if problems is not None else sweep_report(load_matrix_file(path))
    meta, objects = open_stores()
    try:
        run_id = meta.resolve_run_id(ref)
    except LookupError as exc:
        if "several runs" in str(exc):
            raise UserError(exc.args[0]) from None
        run_id = None
    if run_id is not None:
        return run_report(load_run(meta, objects, run_id))
    campaign = find_campaign(meta, ref)
    if campaign is None:
        raise UserError(f"no run or campaign matches {ref!r} (see 'ke runs'; a sweep matrix is a .json file)")
    if (campaign.get("config") or {}).get("kind") == "aten-sweep":
        return sweep_report(matrix_from_store(meta, objects, campaign))
    return campaign_report(load_campaign(meta, campaign))


def generated_at() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z")
