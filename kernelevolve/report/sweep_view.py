"""An ATen sweep's views: the coverage matrix as a family x op heat-map, and the distribution of speedups.

Rows are family / category (elementwise alone has 107 ops, too many for one row); each cell is an op,
coloured by log2 of its speedup where it was timed, green where it is correct but untimed (the CPU
interpreter), purple where it failed and grey where it has not run. Hover shows the op's full record.
"""

from __future__ import annotations

import html
import math
from typing import Any

import plotly.graph_objects as go

from kernelevolve.aten.matrix import floor_cell
from kernelevolve.report.style import base_layout, fmt

MIN_COLUMNS = 16  # a sweep of a few ops keeps square-ish cells instead of stretching them across the page
STATUS_Z = {"untimed": 0, "failed": 1, "not run": 2}
FAILED = "#542788"  # purple: not on the speed scale's red-blue axis, so a failure never reads as "slow"
STATUS_SCALE = [[0.0, "#a1d99b"], [0.33, "#a1d99b"], [0.34, FAILED], [0.66, FAILED], [0.67, "#d9d9d9"],
                [1.0, "#d9d9d9"]]


def _state(row: dict[str, Any]) -> str:
    if row["correct"]:
        return "timed" if row.get("speedup_vs_eager") else "untimed"
    return "not run" if row["status"] == "not run" else "failed"


def _short(name: str) -> str:
    base = name.removesuffix(".default")
    return base if len(base) <= 10 else base[:9] + "…"


def _hover(row: dict[str, Any]) -> str:
    lines = [f"<b>{row['op']}</b> ({row['family']} / {row.get('category', '')})", f"status: {row['status']}",
             f"vs eager: {fmt(row.get('speedup_vs_eager'), suffix='x')}",
             f"vs torch.compile: {fmt(row.get('speedup_vs_compile'), suffix='x')}",
             f"of floor: {floor_cell(row.get('fraction_of_floor'), row.get('floor_flag'))}",
             f"run: {row.get('run_id') or '-'}"]
    if row.get("reason") and not row["correct"]:
        lines.append(html.escape(" ".join(str(row["reason"]).split())[:100]))  # Plotly renders some HTML
    return "<br>".join(lines)


def heatmap_grid(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[dict[str, Any] | None]]]:
    """(row labels, grid of op rows): one grid row per family / category, ops in matrix order."""
    by_row: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_row.setdefault(f"{row['family']} / {row.get('category') or '-'}", []).append(row)
    labels = sorted(by_row)
    width = max((len(v) for v in by_row.values()), default=0)
    return labels, [by_row[label] + [None] * (width - len(by_row[label])) for label in labels]


def coverage_figure(matrix: dict[str, Any]) -> go.Figure:
    labels, grid = heatmap_grid(matrix["ops"])
    cols = list(range(1, (len(grid[0]) if grid else 0) + 1))
    status_z = [[None if r is None or _state(r) == "timed" else STATUS_Z[_state(r)] for r in line] for line in grid]
    speed_z = [[math.log2(r["speedup_vs_eager"]) if r is not None and _state(r) == "timed" else None for r in line]
               for line in grid]
    # text only on timed cells: a heat-map writes its text on empty cells too, and those get the scatter's labels
    text = [[_short(r["op"]) + f"<br>{r['speedup_vs_eager']:.2f}x" if r is not None and _state(r) == "timed" else ""
             for r in line] for line in grid]
    hover = [["" if r is None else _hover(r) for r in line] for line in grid]
    fig = go.Figure()
    fig.add_trace(go.Heatmap(z=status_z, x=cols, y=labels, zmin=0, zmax=2, colorscale=STATUS_SCALE,
                             showscale=False, hoverinfo="skip", xgap=2, ygap=2, name="status"))
    limit = max([abs(v) for line in speed_z for v in line if v is not None] + [0.5])
    fig.add_trace(go.Heatmap(z=speed_z, x=cols, y=labels, zmin=-limit, zmax=limit, colorscale="RdBu", xgap=2, ygap=2,
                             text=text, texttemplate="%{text}", textfont=dict(size=8), hovertext=hover,
                             hoverinfo="text", name="speedup vs eager",
                             colorbar=dict(title="vs eager", tickvals=[-2, -1, 0, 1, 2],
                                           ticktext=["0.25x", "0.5x", "1x", "2x", "4x"])))
    # the untimed/failed cells' labels: a text-only scatter, since the status layer has no colour scale of speed
    xs, ys, words, hovers, colours = [], [], [], [], []
    for label, line in zip(labels, grid, strict=True):
        for col, r in zip(cols, line, strict=True):
            if r is not None and _state(r) != "timed":
                xs.append(col)
                ys.append(label)
                words.append(_short(r["op"]) + "<br>" + _state(r))
                hovers.append(_hover(r))
                colours.append("white" if _state(r) == "failed" else "#333")
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="text", text=words, textfont=dict(size=8, color=colours),
                             hovertext=hovers, hoverinfo="text", showlegend=False, name="ops"))
    s = matrix["summary"]
    title = (f"ATen coverage on {matrix['target']}{' (simulated)' if matrix.get('simulated') else ''}: "
             f"{s['correct']}/{s['total']} correct; colour = speedup vs eager "
             "(green: correct, untimed; purple: failed)")
    fig.update_layout(**base_layout(title, height=max(360, 90 + 46 * len(labels)),
                                    xaxis=dict(visible=False, range=[0.5, max(len(cols), MIN_COLUMNS) + 0.5]),
                                    yaxis=dict(autorange="reversed", showgrid=False),
                                    margin=dict(l=190, r=30, t=60, b=20)))
    return fig


def speedup_figure(matrix: dict[str, Any]) -> go.Figure:
    """Per family, the distribution of speedups vs eager and vs torch.compile over the timed correct ops."""
    timed = [r for r in matrix["ops"] if r["correct"]]
    fig = go.Figure()
    for key, name, colour in (("speedup_vs_eager", "vs eager", "#1f77b4"),
                              ("speedup_vs_compile", "vs torch.compile", "#d62728")):
        rows = [r for r in timed if r.get(key)]
        if not rows:
            continue
        fig.add_trace(go.Box(x=[r["family"] for r in rows], y=[r[key] for r in rows], name=name,
                             marker_color=colour, boxpoints="all", jitter=0.4, pointpos=0,
                             hovertext=[f"{r['op']}: {r[key]:.2f}x" for r in rows], hoverinfo="text"))
    fig.add_hline(y=1.0, line=dict(color="#444", dash="dot", width=1))
    s = matrix["summary"]
    fig.update_layout(**base_layout(
        f"Distribution of speedups over correct ops (geomean {fmt(s.get('geomean_speedup_vs_eager'))}x vs eager, "
        f"{fmt(s.get('geomean_speedup_vs_compile'))}x vs torch.compile)",
        boxmode="group", yaxis=dict(type="log", title="speedup (log scale)"), height=440,
        legend=dict(orientation="h", y=-0.15)))
    return fig


def has_speedups(matrix: dict[str, Any]) -> bool:
    return any(r.get("speedup_vs_eager") for r in matrix["ops"])


def failures_table(matrix: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    headers = ["op", "family", "status", "reason", "run"]
    rows = [[r["op"], r["family"], r["status"], " ".join(str(r.get("reason") or "").split())[:200],
             r.get("run_id") or "-"] for r in matrix["ops"] if not r["correct"]]
    return headers, rows
