"""A problem sweep's (``ke sweep``) views: fast_p against p per baseline with a line per level, the per-problem
status / speedup heat-map (the ATen sweep's, one row per level), and the problems' speedups sorted.

Every figure is computed from the matrix's rows with ``kernelevolve.sweep.metrics``, so a report written by an
older version (benchmarks/any_op_sweep.py, without fast_p) draws the same curves.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kernelevolve.report.page import NamedFigure, Report, Section, Table
from kernelevolve.report.style import STRATEGY_COLOURS, base_layout, fmt
from kernelevolve.report.sweep_view import coverage_figure
from kernelevolve.sweep.metrics import BASELINES, THRESHOLDS, by_level, fast_p_curve, p_label

P_GRID = [round(i * 0.02, 2) for i in range(151)]  # 0 .. 3 in fine steps
CELL_TEXT_LIMIT = 40  # problems in a level's row beyond which cells carry no text
BASELINE_TITLES = {"eager": "vs eager", "compile": "vs torch.compile (static, per case)"}


def _levels(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    levels: dict[str, list[dict[str, Any]]] = {}
    for r in report["rows"]:
        levels.setdefault(r["family"], []).append(r)
    return dict(sorted(levels.items()))


def is_timed(report: dict[str, Any]) -> bool:
    return any(r["correct"] and r.get(key) for r in report["rows"] for key in BASELINES.values())


def fast_p_figure(report: dict[str, Any]) -> go.Figure:
    """fast_p(p) for p in [0, 3], one panel per baseline, one line per level (KernelBench's curve)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=[f"fast_p {BASELINE_TITLES[b]}" for b in BASELINES],
                        shared_yaxes=True)
    for i, (level, rows) in enumerate(_levels(report).items()):
        colour = STRATEGY_COLOURS[i % len(STRATEGY_COLOURS)]
        for col, (baseline, key) in enumerate(BASELINES.items(), start=1):
            ys = fast_p_curve(rows, P_GRID, key)
            fig.add_trace(go.Scatter(x=P_GRID, y=ys, mode="lines", name=level, legendgroup=level,
                                     showlegend=col == 1, line=dict(color=colour, shape="hv", width=2),
                                     hovertemplate=f"{level} {baseline}: fast_%{{x}} = %{{y:.0%}}<extra></extra>"),
                          row=1, col=col)
    for col in (1, 2):
        for p in THRESHOLDS[1:]:
            fig.add_vline(x=p, line=dict(color="#999", dash="dot", width=1), row=1, col=col)
    title = f"fast_p on {report['hw']}: fraction of a level's problems correct and more than p times faster"
    if not is_timed(report):
        title += " (untimed target: no speedups, so no curve)"
    fig.update_layout(**base_layout(title, height=420, legend=dict(orientation="h", y=-0.2)))
    fig.update_xaxes(title_text="p (speedup threshold)", range=[0, 3])
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
    fig.update_yaxes(title_text="fast_p", row=1, col=1)
    return fig


def problems_figure(report: dict[str, Any]) -> go.Figure:
    """One cell per problem, one row per level: green correct (untimed), coloured by speedup, purple failed."""
    rows = [{**r, "category": "problems"} for r in report["rows"]]
    correct = sum(bool(r["correct"]) for r in rows)
    fig = coverage_figure({"target": report["hw"], "ops": rows, "summary": {"correct": correct, "total": len(rows)}})
    fig.update_layout(title=dict(text=f"Problems on {report['hw']}: {correct}/{len(rows)} correct; colour = speedup "
                                      "vs eager (green: correct, untimed; purple: failed)"))
    widest = max((len(v) for v in _levels(report).values()), default=0)
    if widest > CELL_TEXT_LIMIT:  # labels would overlap in cells this narrow: hover alone tells the problem
        fig.update_traces(texttemplate="", selector=dict(type="heatmap"))
        fig.update_traces(mode="markers", marker=dict(opacity=0), selector=dict(type="scatter"))
    return fig


def speedups_figure(report: dict[str, Any]) -> go.Figure:
    """Each timed correct problem's speedups, sorted, levels side by side (log scale, 1x dotted)."""
    fig = go.Figure()
    timed = [r for r in report["rows"] if r["correct"] and (r.get("speedup_vs_compile") or r.get("speedup_vs_eager"))]
    order = sorted(timed, key=lambda r: (r["family"], -(r.get("speedup_vs_compile") or r.get("speedup_vs_eager"))))
    names = [r["op"] for r in order]
    for key, name, colour in (("speedup_vs_eager", "vs eager", "#1f77b4"),
                              ("speedup_vs_compile", "vs torch.compile", "#d62728")):
        fig.add_trace(go.Bar(x=names, y=[r.get(key) for r in order], name=name, marker_color=colour,
                             hovertext=[f"{r['op']}: {fmt(r.get(key), suffix='x')}" for r in order],
                             hoverinfo="text"))
    fig.add_hline(y=1.0, line=dict(color="#444", dash="dot", width=1))
    fig.update_layout(**base_layout("Speedup per correct problem, sorted within each level", barmode="group",
                                    yaxis=dict(type="log", title="speedup (log scale)"), height=460,
                                    xaxis=dict(tickangle=-60, tickfont=dict(size=8)),
                                    legend=dict(orientation="h", y=1.08), margin=dict(l=60, r=30, t=60, b=160)))
    return fig


def levels_table(report: dict[str, Any]) -> Table:
    headers = ["level", "correct", "rate"] + [f"fast_{p_label(p)} {b}" for b in BASELINES for p in THRESHOLDS] + [
        "geomean vs eager", "geomean vs compile", "median of floor"]
    rows = []
    for level, s in by_level(report["rows"]).items():
        fast = [fmt(None if v is None else 100 * v, 0, "%") for b in BASELINES
                for v in (s["fast_p"][b][p_label(p)] for p in THRESHOLDS)]
        rows.append([level, f"{s['correct']}/{s['total']}", fmt(100 * s["rate"], 0, "%"), *fast,
                     fmt(s["geomean_vs_eager"], suffix="x"), fmt(s["geomean_vs_compile"], suffix="x"),
                     fmt(s["median_fraction_of_floor"])])
    return Table("Per level", headers, rows, "fast_p: correct and speedup > p (KernelBench); '-' where untimed.")


def problem_sweep_report(report: dict[str, Any]) -> Report:
    """The page for a ``ke sweep`` matrix JSON."""
    from kernelevolve.sweep.markdown import REFERENCES

    rows = report["rows"]
    facts = [("target", str(report["hw"])), ("correct", f"{sum(bool(r['correct']) for r in rows)}/{len(rows)}"),
             ("budget", str(report.get("budget"))), ("operator", "offline (no LLM)")]
    for key in ("device", "torch", "triton", "date", "commit", "command", "source"):
        if report.get(key):
            facts.append((key, str(report[key])))
    figures: list[NamedFigure | Table | str] = [
        NamedFigure("fast_p", fast_p_figure(report), "KernelBench's fast_p against the threshold p, per level; "
                    "left against eager PyTorch, right against a static torch.compile per case."),
        levels_table(report)]
    if not is_timed(report):
        figures.insert(0, "This target checks correctness only (untimed): fast_p has no values, only the correct "
                          "rate counts.")
    per_problem: list[NamedFigure | Table | str] = [NamedFigure("problems", problems_figure(report),
                                                                "One cell per problem; hover for its record.")]
    if is_timed(report):
        per_problem.append(NamedFigure("speedups", speedups_figure(report)))
    failed = [[r["op"], r["status"], " ".join(str(r.get("reason") or "").split())[:200], r.get("run_id") or "-"]
              for r in rows if not r["correct"]]
    per_problem.append(Table(f"{len(failed)} problem(s) without a correct kernel", ["problem", "status", "reason",
                                                                                   "run"], failed)
                       if failed else "Every problem has a correct kernel.")
    references = Table("Published reference points (offline here, no LLM; these had an LLM write the kernels)",
                       ["system", "result", "conditions", "source"],
                       [[r["system"], r["result"], r["conditions"], r["source"]] for r in REFERENCES])
    sections = [Section("fast_p per level", figures), Section("Per problem", per_problem),
                Section("References", [references])]
    return Report("sweep", f"Problem sweep on {report['hw']}", facts, sections)
