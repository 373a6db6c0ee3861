"""Colours and labels shared by every view, so a status looks the same in the tree, the trajectory and a sweep."""

from __future__ import annotations

STATUS_COLOURS: dict[str, str] = {
    "ok": "#2ca02c",
    "incorrect": "#d62728",
    "compile_error": "#ff7f0e",
    "runtime_error": "#9467bd",
    "timeout": "#8c564b",
    "crash": "#e377c2",
    "rejected": "#7f7f7f",
}
OTHER_STATUS_COLOUR = "#bcbd22"
BEST_OUTLINE = "#111111"
STRATEGY_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
FONT = dict(family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size=12)


def status_colour(status: str) -> str:
    return STATUS_COLOURS.get(status, OTHER_STATUS_COLOUR)


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    """A number for a table cell; '-' where there is none (untimed targets, failed nodes)."""
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def base_layout(title: str, **extra) -> dict:
    """The layout every figure starts from: same font, white background, room for the title."""
    layout = dict(title=dict(text=title, x=0.01, xanchor="left"), font=FONT, template="plotly_white",
                  margin=dict(l=60, r=30, t=60, b=50))
    layout.update(extra)
    return layout
