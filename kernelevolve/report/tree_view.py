"""The search tree as a Plotly figure: a tidy layout computed here, edges as lines, one marker per node.

Why markers per status in separate traces: the legend then explains the colours. Each marker carries its
node id in ``customdata``, which the page's click handler uses to fill the side panel. The root (the PyTorch
reference) is an annotation, not a marker, so the page's marker count equals the run's node count.
"""

from __future__ import annotations

import html
import math
from typing import Any

import plotly.graph_objects as go

from kernelevolve.report.run_data import RunData
from kernelevolve.report.style import BEST_OUTLINE, base_layout, status_colour
from search.node import Node

ROOT = -1  # the virtual root's key in the layout
LABELLED_NODES = 80  # up to this many nodes, each marker is labelled with its id (beyond, hover only)


def tidy_layout(nodes: list[Node]) -> dict[int, tuple[float, float]]:
    """node_id -> (x, depth): leaves on consecutive columns in depth-first order, parents over their children.

    Iterative, so a deep chain (a greedy run of thousands of nodes) cannot hit Python's recursion limit."""
    children: dict[int, list[int]] = {ROOT: []}
    known = {n.node_id for n in nodes}
    for n in nodes:
        parent = n.parent_id if n.parent_id in known else ROOT
        children.setdefault(parent, []).append(n.node_id)
    depth: dict[int, int] = {ROOT: 0}
    x: dict[int, float] = {}
    next_leaf = 0.0
    stack: list[tuple[int, bool]] = [(ROOT, False)]
    while stack:
        key, done = stack.pop()
        kids = children.get(key, [])
        if done or not kids:
            if kids:
                x[key] = (x[kids[0]] + x[kids[-1]]) / 2
            else:
                x[key], next_leaf = next_leaf, next_leaf + 1
            continue
        stack.append((key, True))
        for kid in reversed(kids):
            depth[kid] = depth[key] + 1
            stack.append((kid, False))
    return {key: (x[key], float(depth[key])) for key in x}


def marker_size(node: Node, best_fitness: float) -> float:
    """Correct nodes grow with fitness (relative to the run's best); failed nodes are small."""
    if node.is_buggy or not math.isfinite(node.fitness) or best_fitness <= 0:
        return 7.0
    return 9.0 + 17.0 * max(0.0, min(1.0, node.fitness / best_fitness))


def _hover(node: Node) -> str:
    parent = "root" if node.parent_id is None else f"node {node.parent_id}"
    lines = [f"<b>node {node.node_id}</b> \u2190 {parent}", f"status: {html.escape(node.status)}",
             f"fitness: {node.fitness:.3f}"]
    if node.speedup_vs_eager is not None:
        lines.append(f"vs eager: {node.speedup_vs_eager:.2f}x")
    if node.speedup_vs_compile is not None:
        lines.append(f"vs torch.compile: {node.speedup_vs_compile:.2f}x")
    if node.reason:
        lines.append(html.escape(node.reason[:90]))  # Plotly renders a subset of HTML in hover text
    return "<br>".join(lines)


def tree_figure(data: RunData) -> go.Figure:
    pos = tidy_layout(data.nodes)
    best_fitness = data.best.fitness if data.best else 0.0
    best_id = data.best.node_id if data.best else None
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for n in data.nodes:
        parent = n.parent_id if n.parent_id in pos else ROOT
        (x0, y0), (x1, y1) = pos[parent], pos[n.node_id]
        edge_x += [x0, x1, None]
        edge_y += [-y0, -y1, None]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=edge_x, y=edge_y, mode="lines", line=dict(color="#b0b0b0", width=1),
                             hoverinfo="skip", showlegend=False, name="edges"))
    labels = len(data.nodes) <= LABELLED_NODES
    by_status: dict[str, list[Node]] = {}
    for n in data.nodes:
        by_status.setdefault(n.status, []).append(n)
    for status in sorted(by_status, key=lambda s: (s != "ok", s)):
        # the legend draws a trace's first marker: keep the best node's star from standing for a whole status
        group = sorted(by_status[status], key=lambda n: n.node_id == best_id)
        fig.add_trace(go.Scatter(
            x=[pos[n.node_id][0] for n in group], y=[-pos[n.node_id][1] for n in group],
            mode="markers+text" if labels else "markers", text=[str(n.node_id) for n in group],
            textposition="bottom center", textfont=dict(size=9, color="#555"),
            name=f"{status} ({len(group)})", meta="node", customdata=[n.node_id for n in group],
            hovertext=[_hover(n) for n in group], hoverinfo="text",
            marker=dict(color=status_colour(status), size=[marker_size(n, best_fitness) for n in group],
                        symbol=["star" if n.node_id == best_id else "circle" for n in group],
                        line=dict(color=[BEST_OUTLINE if n.node_id == best_id else "white" for n in group],
                                  width=[2.5 if n.node_id == best_id else 1 for n in group]))))
    root_x = pos[ROOT][0]
    max_depth = max((y for _, y in pos.values()), default=0.0)
    layout = base_layout(f"Search tree: {len(data.nodes)} nodes (size = fitness; star = best)",
                         xaxis=dict(visible=False), yaxis=dict(visible=False, range=[-max_depth - 0.6, 0.6]),
                         hovermode="closest", clickmode="event", legend=dict(orientation="h", y=-0.05),
                         height=max(420, min(1400, 120 + 70 * int(max_depth + 1))))
    layout["annotations"] = [dict(x=root_x, y=0, text="PyTorch reference", showarrow=False,
                                  bgcolor="#eef2f7", bordercolor="#555", borderwidth=1, font=dict(size=11))]
    fig.update_layout(**layout)
    return fig


def node_payload(data: RunData) -> dict[str, Any]:
    """What the side panel shows, embedded in the page as JSON: ``nodes`` (node_id -> fields) and ``code``
    (kernel ref -> source, once per distinct kernel: many nodes of a long run share one)."""
    out: dict[str, Any] = {}
    code: dict[str, str] = {}
    for n in data.nodes:
        detail = data.details.get(n.node_id)
        if detail and n.path_ref:
            code.setdefault(n.path_ref, detail.code)
        out[str(n.node_id)] = {
            "node_id": n.node_id, "parent_id": n.parent_id, "depth": n.depth, "status": n.status,
            "fitness": n.fitness if math.isfinite(n.fitness) else None, "reason": n.reason,
            "speedup_vs_eager": n.speedup_vs_eager, "speedup_vs_compile": n.speedup_vs_compile,
            "tokens_in": n.tokens_in, "tokens_out": n.tokens_out, "cost_usd": n.cost_usd,
            "eval_seconds": n.eval_seconds, "operator_meta": n.operator_meta,
            "code_ref": n.path_ref, "evaluation": detail.evaluation if detail else None,
            "overview": detail.overview if detail else "", "missing": detail.missing if detail else [],
        }
    return {"nodes": out, "code": code}
