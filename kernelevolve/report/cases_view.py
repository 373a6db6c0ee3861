"""Per-case views of the best node: latency against eager and torch.compile (IQR bars), speedups with their
spread, and how close each case gets to its physical floor (the roofline view).

Why the spread comes from the candidate's IQR only: the evaluator stores the interquartile range of the
candidate's interleaved samples, not of the baselines'. A speedup's bar spans eager / (median +- IQR / 2).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kernelevolve.aten.matrix import floor_cell
from kernelevolve.report.style import base_layout, fmt

BOTTLENECK_COLOURS = {"memory": "#1f77b4", "compute": "#d62728", "latency": "#9467bd"}


def timed_cases(evaluation: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Cases with a candidate latency (production shapes; the small correctness cases have none)."""
    return [c for c in (evaluation or {}).get("cases", []) if c.get("latency_ms")]


def speedup_spread(baseline: float | None, latency: float, iqr: float | None) -> tuple[float | None, float, float]:
    """(speedup, minus, plus): the speedup and its error-bar lengths from the candidate's IQR."""
    if not baseline:
        return None, 0.0, 0.0
    value = baseline / latency
    if not iqr:
        return value, 0.0, 0.0
    slow, fast = latency + iqr / 2, max(latency - iqr / 2, latency * 1e-3)
    return value, value - baseline / slow, baseline / fast - value


def _speedup_trace(cases: list[dict[str, Any]], key: str, name: str, colour: str) -> go.Bar:
    values, minus, plus = [], [], []
    for c in cases:
        v, lo, hi = speedup_spread(c.get(key), c["latency_ms"], c.get("latency_iqr_ms"))
        values.append(v)
        minus.append(lo)
        plus.append(hi)
    return go.Bar(x=[c["name"] for c in cases], y=values, name=name, marker_color=colour,
                  error_y=dict(type="data", array=plus, arrayminus=minus, symmetric=False, visible=any(plus)),
                  texttemplate="%{y:.2f}x", textposition="outside", showlegend=True)


def cases_figure(evaluation: dict[str, Any], node_id: int, source: str) -> go.Figure:
    cases = timed_cases(evaluation)
    names = [c["name"] for c in cases]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("latency (ms, median; bars: candidate IQR)",
                                        "speedup of the best node (bars: spread from the candidate IQR)"))
    has_iqr = any(c.get("latency_iqr_ms") for c in cases)
    fig.add_trace(go.Bar(x=names, y=[c["latency_ms"] for c in cases], name="best node", marker_color="#2ca02c",
                         error_y=dict(type="data", array=[(c.get("latency_iqr_ms") or 0) / 2 for c in cases],
                                      visible=has_iqr)), row=1, col=1)
    fig.add_trace(go.Bar(x=names, y=[c.get("eager_ms") for c in cases], name="eager", marker_color="#7f7f7f"),
                  row=1, col=1)
    if any(c.get("compile_ms") for c in cases):
        fig.add_trace(go.Bar(x=names, y=[c.get("compile_ms") for c in cases], name="torch.compile",
                             marker_color="#ff7f0e"), row=1, col=1)
    extra_names = sorted({k for c in cases for k in (c.get("baselines_ms") or {})})
    for i, extra in enumerate(extra_names):
        fig.add_trace(go.Bar(x=names, y=[(c.get("baselines_ms") or {}).get(extra) for c in cases], name=extra,
                             marker_color=["#bcbd22", "#17becf", "#8c564b"][i % 3]), row=1, col=1)
    fig.add_trace(_speedup_trace(cases, "eager_ms", "vs eager", "#1f77b4"), row=2, col=1)
    if any(c.get("compile_ms") for c in cases):
        fig.add_trace(_speedup_trace(cases, "compile_ms", "vs torch.compile", "#d62728"), row=2, col=1)
    fig.add_hline(y=1.0, line=dict(color="#444", dash="dot", width=1), row=2, col=1)
    kind = "simulated" if evaluation.get("simulated") else "measured"
    fig.update_layout(**base_layout(f"Per-case latency and speedups of the best node, {node_id} ({kind}; {source})",
                                    barmode="group", height=660, legend=dict(orientation="h", y=-0.12),
                                    margin=dict(l=60, r=30, t=100, b=50)))
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(title_text="x", rangemode="tozero", row=2, col=1)
    return fig


def floor_figure(evaluation: dict[str, Any]) -> go.Figure:
    cases = [c for c in timed_cases(evaluation) if c.get("fraction_of_floor")]
    fig = go.Figure()
    for bottleneck in sorted({c.get("bottleneck") or "unknown" for c in cases}):
        group = [c for c in cases if (c.get("bottleneck") or "unknown") == bottleneck]
        fig.add_trace(go.Bar(
            x=[c["name"] for c in group], y=[c["fraction_of_floor"] for c in group], name=f"{bottleneck}-bound",
            showlegend=True,
            marker_color=BOTTLENECK_COLOURS.get(bottleneck, "#7f7f7f"), texttemplate="%{y:.2f}",
            textposition="outside",
            hovertext=[f"{c['name']}: {c['latency_ms']:.4f} ms measured, floor {fmt(c.get('floor_ms'), 4)} ms"
                       for c in group], hoverinfo="text"))
    fig.add_hline(y=1.0, line=dict(color="#444", dash="dot", width=1), annotation_text="at the floor")
    fig.update_layout(**base_layout("Fraction of the physical floor per case (floor / measured time; roofline)",
                                    yaxis=dict(title="floor / measured", rangemode="tozero"), height=420,
                                    legend=dict(orientation="h", y=-0.2), xaxis=dict(categoryorder="trace")))
    return fig


def cases_table(evaluation: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The speedup table with spreads: one row per timed case."""
    headers = ["case", "best ms (IQR)", "eager ms", "compile ms", "vs eager", "vs compile", "floor ms",
               "of floor", "bottleneck"]
    rows = []
    for c in timed_cases(evaluation):
        latency, iqr = c["latency_ms"], c.get("latency_iqr_ms")
        cells = [c["name"], f"{latency:.4f}" + (f" ({iqr:.4f})" if iqr is not None else ""),
                 fmt(c.get("eager_ms"), 4), fmt(c.get("compile_ms"), 4)]
        for key in ("eager_ms", "compile_ms"):
            value, minus, plus = speedup_spread(c.get(key), latency, iqr)
            cells.append("-" if value is None else
                         f"{value:.2f}x" + (f" [{value - minus:.2f}, {value + plus:.2f}]" if iqr else ""))
        cells += [fmt(c.get("floor_ms"), 4), floor_cell(c.get("fraction_of_floor"), c.get("floor_flag")),
                  c.get("bottleneck") or "-"]
        rows.append(cells)
    return headers, rows
