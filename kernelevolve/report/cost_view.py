"""Tokens and cost per node, for runs where an LLM operator wrote the candidates."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kernelevolve.report.run_data import RunData
from kernelevolve.report.style import base_layout


def cost_figure(data: RunData) -> go.Figure:
    nodes = data.nodes
    labels = [str(n.node_id) for n in nodes]
    cumulative, total = [], 0.0
    for n in nodes:
        total += n.cost_usd or 0.0
        cumulative.append(total)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Bar(x=labels, y=[n.tokens_in for n in nodes], name="tokens in", marker_color="#1f77b4"))
    fig.add_trace(go.Bar(x=labels, y=[n.tokens_out for n in nodes], name="tokens out", marker_color="#ff7f0e"))
    fig.add_trace(go.Scatter(x=labels, y=cumulative, name="cumulative cost (USD)", mode="lines+markers",
                             line=dict(color="#2ca02c", width=2),
                             hovertext=[f"node {n.node_id}: ${n.cost_usd:.4f} (total ${c:.4f})"
                                        for n, c in zip(nodes, cumulative, strict=True)], hoverinfo="text"),
                  secondary_y=True)
    tokens = sum(n.tokens_in + n.tokens_out for n in nodes)
    fig.update_layout(**base_layout(f"Tokens and cost per node ({tokens:,} tokens, ${total:.2f} in all)",
                                    barmode="stack", height=400, legend=dict(orientation="h", y=-0.2),
                                    xaxis=dict(title="node", type="category")))
    fig.update_yaxes(title_text="tokens", secondary_y=False)
    fig.update_yaxes(title_text="USD", secondary_y=True, rangemode="tozero")
    return fig
