"""The paper's trajectory figure: each node's fitness in the order it was stored, the best so far, and the
boundary between the draft phase (children of the root) and the expansion phase."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from kernelevolve.report.run_data import RunData
from kernelevolve.report.style import base_layout, status_colour


def best_so_far(fitness: list[float], buggy: list[bool]) -> list[float | None]:
    """Running maximum over correct nodes; None until the first correct one."""
    out: list[float | None] = []
    best: float | None = None
    for value, bad in zip(fitness, buggy, strict=True):
        if not bad and math.isfinite(value) and (best is None or value > best):
            best = value
        out.append(best)
    return out


def fitness_meaning(data: RunData) -> str:
    """What fitness measures on this run's target (the evaluator's rule: vs compile where timed against it)."""
    best = data.best_evaluation or {}
    if best.get("timed") and best.get("speedup_vs_compile") is not None:
        return "speedup vs torch.compile"
    if best.get("timed") or best.get("simulated"):
        return "speedup vs eager" + (" (simulated)" if best.get("simulated") else "")
    return "fitness (correctness only)"


def trajectory_figure(data: RunData) -> go.Figure:
    nodes = data.nodes
    steps = list(range(1, len(nodes) + 1))
    fitness = [n.fitness if math.isfinite(n.fitness) else 0.0 for n in nodes]
    running = best_so_far(fitness, [n.is_buggy for n in nodes])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps, y=running, mode="lines", line=dict(color="#1f77b4", width=2.5, shape="hv"),
                             name="best so far", connectgaps=False))
    fig.add_trace(go.Scatter(
        x=steps, y=fitness, mode="markers", name="node fitness", customdata=[n.node_id for n in nodes],
        marker=dict(color=[status_colour(n.status) for n in nodes], size=8,
                    symbol=["x" if n.is_buggy else "circle" for n in nodes], line=dict(color="white", width=0.5)),
        hovertext=[f"node {n.node_id} ({n.status})<br>fitness {f:.3f}" for n, f in zip(nodes, fitness, strict=True)],
        hoverinfo="text"))
    drafts = data.draft_count
    shapes, annotations = [], []
    if 0 < drafts < len(nodes):
        boundary = drafts + 0.5
        shapes = [dict(type="rect", xref="x", yref="paper", x0=0.5, x1=boundary, y0=0, y1=1,
                       fillcolor="#f2e8d5", opacity=0.5, line_width=0, layer="below"),
                  dict(type="line", xref="x", yref="paper", x0=boundary, x1=boundary, y0=0, y1=1,
                       line=dict(color="#8a6d3b", dash="dash", width=1.5))]
        annotations = [dict(x=(0.5 + boundary) / 2, y=1.02, xref="x", yref="paper", text="draft",
                            showarrow=False, font=dict(color="#8a6d3b")),
                       dict(x=(boundary + len(nodes) + 0.5) / 2, y=1.02, xref="x", yref="paper",
                            text="expansion", showarrow=False, font=dict(color="#8a6d3b"))]
    measure = fitness_meaning(data)
    fig.update_layout(**base_layout(
        f"Fitness trajectory ({len(nodes)} nodes, {drafts} drafted before the first expansion)",
        xaxis=dict(title="node (search order)", range=[0.5, max(len(nodes), 1) + 0.5]),
        yaxis=dict(title=measure, rangemode="tozero"),
        shapes=shapes, annotations=annotations, legend=dict(orientation="h", y=-0.2), height=420))
    return fig
