"""A campaign's views: a row per run, and strategies compared by best-so-far fitness against evaluations.

Fitness is only comparable within one op on one target, so each (op, target) gets its own panel. In a panel
each strategy is a thick median line over its seeds, a band from the worst to the best seed, and a thin line
per seed; a seed counts at step i only once it has made i evaluations.
"""

from __future__ import annotations

import math
import statistics

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kernelevolve.report.campaign_data import CampaignData, CampaignRun
from kernelevolve.report.style import STRATEGY_COLOURS, base_layout, fmt


def running_best(fitness: list[float]) -> list[float]:
    """Best-so-far per evaluation; 0 (a failed node's fitness) until the first correct node."""
    out, best = [], 0.0
    for value in fitness:
        if not math.isnan(value):
            best = max(best, value)
        out.append(best)
    return out


def step_band(upper: list[float], lower: list[float]) -> tuple[list[float], list[float]]:
    """A closed polygon between two step curves (value i holds from x=i to x=i+1), for a filled band."""
    xs: list[float] = []
    ys: list[float] = []
    for i, value in enumerate(upper, start=1):
        xs += [i, i + 1 if i < len(upper) else i]
        ys += [value, value]
    for i in range(len(lower), 0, -1):
        xs += [i + 1 if i < len(lower) else i, i]
        ys += [lower[i - 1], lower[i - 1]]
    return xs, ys


def _group_key(row: CampaignRun) -> str:
    return f"{row.run.op} @ {row.run.hw}{' (simulated)' if row.run.simulated else ''}"


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def strategies_figure(data: CampaignData) -> go.Figure:
    groups: dict[str, list[CampaignRun]] = {}
    for row in data.runs:
        groups.setdefault(_group_key(row), []).append(row)
    names = sorted(groups)
    strategies = sorted({row.run.strategy for row in data.runs})
    colour = {s: STRATEGY_COLOURS[i % len(STRATEGY_COLOURS)] for i, s in enumerate(strategies)}
    fig = make_subplots(rows=max(1, len(names)), cols=1, subplot_titles=names or ["no runs yet"],
                        vertical_spacing=min(0.12, 0.35 / max(1, len(names))))
    for panel, name in enumerate(names, start=1):
        for strategy in strategies:
            runs = [r for r in groups[name] if r.run.strategy == strategy]
            if not runs:
                continue
            curves = [running_best(r.fitness) for r in runs]
            steps = max((len(c) for c in curves), default=0)
            xs = list(range(1, steps + 1))
            at = [[c[i] for c in curves if len(c) > i] for i in range(steps)]
            legend = panel == 1
            band_x, band_y = step_band([max(v) for v in at], [min(v) for v in at])
            fig.add_trace(go.Scatter(x=band_x, y=band_y, mode="lines", fill="toself", line=dict(width=0),
                                     fillcolor=_rgba(colour[strategy], 0.15),
                                     hoverinfo="skip", showlegend=False, legendgroup=strategy),
                          row=panel, col=1)
            for r, curve in zip(runs, curves, strict=True):
                fig.add_trace(go.Scatter(x=xs[:len(curve)], y=curve, mode="lines", legendgroup=strategy,
                                         line=dict(color=_rgba(colour[strategy], 0.45), width=1, shape="hv"),
                                         name=f"{strategy} seed {r.run.seed}", showlegend=False,
                                         hovertext=f"run {r.run.run_id}, seed {r.run.seed}", hoverinfo="text+y"),
                              row=panel, col=1)
            fig.add_trace(go.Scatter(x=xs, y=[statistics.median(v) for v in at], mode="lines",
                                     name=f"{strategy} (median of {len(runs)} seed{'s' if len(runs) > 1 else ''})",
                                     line=dict(color=colour[strategy], width=3, shape="hv"), legendgroup=strategy,
                                     showlegend=legend), row=panel, col=1)
        fig.update_yaxes(title_text="best fitness so far", rangemode="tozero", row=panel, col=1)
        fig.update_xaxes(title_text="evaluations", tickformat="d", rangemode="tozero", row=panel, col=1)
    fig.update_layout(**base_layout(f"Strategies compared: best-so-far fitness against evaluations, over seeds "
                                    f"(campaign {data.name})", height=max(420, 330 * len(names)),
                                    legend=dict(orientation="h", y=-0.08 if len(names) > 1 else -0.2),
                                    margin=dict(l=60, r=30, t=100, b=50)))
    return fig


def campaign_table(data: CampaignData) -> tuple[list[str], list[list[str]]]:
    headers = ["slot", "run", "op", "hw", "strategy", "seed", "status", "nodes", "best node", "best fitness",
               "vs eager", "vs compile"]
    rows = []
    for r in data.runs:
        run = r.run
        rows.append([str(r.slot), run.run_id, run.op, run.hw + (" (sim)" if run.simulated else ""), run.strategy,
                     str(run.seed), run.status, f"{len(r.fitness)}/{run.budget}",
                     "-" if r.best_node is None else str(r.best_node), fmt(r.best_fitness, 3),
                     fmt(r.speedup_vs_eager, suffix="x"), fmt(r.speedup_vs_compile, suffix="x")])
    return headers, rows
