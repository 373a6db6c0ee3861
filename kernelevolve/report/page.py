"""HTML assembly: one self-contained page with plotly.js inlined once, the figures, tables and the node panel.

Nothing is fetched when the page opens (no CDN, no fonts), so it works offline and as a CI artifact. Node data
is embedded as JSON in a ``<script type="application/json">`` block and only ever written into the page as
text (``textContent``), so code or reasons containing markup cannot inject anything.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from kernelevolve import __version__

TREE_DIV = "ke-tree"


@dataclass
class NamedFigure:
    name: str  # the div id suffix and the image file's suffix: report-<name>.png
    figure: go.Figure
    caption: str = ""
    image_width: int = 1200  # pixels of the PNG/SVG export (the page itself fills the window's width)


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Section:
    title: str
    items: list[NamedFigure | Table | str] = field(default_factory=list)  # str: a paragraph of plain text


@dataclass
class Report:
    kind: str  # run | campaign | sweep
    title: str
    facts: list[tuple[str, str]]
    sections: list[Section]
    nodes: dict[str, Any] | None = None  # run reports: the side panel's data (tree_view.node_payload)
    selected: int | None = None  # the node the panel shows first (the best)
    node_count: int | None = None

    @property
    def figures(self) -> list[NamedFigure]:
        return [item for s in self.sections for item in s.items if isinstance(item, NamedFigure)]


def finite(value: Any) -> Any:
    """The value with NaN and infinities as None, recursively: JSON.parse rejects them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element (no '</script>' or '<!--' can close or comment it)."""
    text = json.dumps(finite(value), default=str, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f2d3d;color:#fff;padding:14px 24px}header h1{margin:0 0 6px;font-size:20px}
.facts{display:flex;flex-wrap:wrap;gap:6px 18px;font-size:13px}.facts b{color:#9fc3e7;font-weight:500}
main{padding:10px 24px 40px}section{background:#fff;border:1px solid #e3e3e3;border-radius:6px;margin:14px 0;
padding:10px 14px}section h2{font-size:16px;margin:4px 0 8px}.caption{font-size:12px;color:#555;margin:2px 0 8px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 7px;
text-align:right;white-space:nowrap}th{background:#f0f3f6}td:first-child,th:first-child{text-align:left}
.tree-wrap{display:flex;gap:12px;align-items:flex-start}.tree-wrap .plot{flex:1 1 60%;min-width:0}
#ke-node-panel{flex:0 0 38%;max-height:720px;overflow:auto;border-left:3px solid #1f77b4;padding:4px 10px;
font-size:12px}#ke-node-panel pre{background:#f6f8fa;padding:6px;overflow:auto;max-height:380px;font-size:11px}
#ke-node-panel h3{margin:4px 0;font-size:15px}.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px}
.kv span:nth-child(odd){color:#666}footer{font-size:11px;color:#777;padding:0 24px 20px}
"""

_PANEL_JS = """
(function(){
  const data = JSON.parse(document.getElementById('ke-node-data').textContent);
  const nodes = data.nodes;
  const panel = document.getElementById('ke-node-panel');
  function el(tag, text, cls){const e=document.createElement(tag); if(text!==undefined) e.textContent=text;
    if(cls) e.className=cls; return e;}
  function num(v, d, s){return (v===null||v===undefined)?'-':Number(v).toFixed(d)+(s||'');}
  function block(title, text, open){const d=el('details'); if(open) d.open=true; d.appendChild(el('summary', title));
    d.appendChild(el('pre', text||'(none)')); return d;}
  window.keShowNode = function(id){
    const n = nodes[String(id)]; if(!n) return;
    panel.replaceChildren();
    panel.dataset.nodeId = String(id);
    panel.appendChild(el('h3', 'node ' + n.node_id + ' \\u2190 ' + (n.parent_id===null?'root':'node '+n.parent_id)));
    const kv = el('div', undefined, 'kv');
    const rows = [['status', n.status], ['fitness', num(n.fitness, 3)], ['vs eager', num(n.speedup_vs_eager, 2, 'x')],
      ['vs torch.compile', num(n.speedup_vs_compile, 2, 'x')], ['depth', String(n.depth)],
      ['evaluation', num(n.eval_seconds, 1, ' s')]];
    if(n.tokens_in||n.tokens_out||n.cost_usd) rows.push(['tokens in / out', n.tokens_in+' / '+n.tokens_out],
      ['cost', '$'+num(n.cost_usd, 4)]);
    if(n.missing && n.missing.length) rows.push(['missing artifacts', n.missing.join(', ')]);
    for(const [k,v] of rows){kv.appendChild(el('span', k)); kv.appendChild(el('span', v));}
    panel.appendChild(kv);
    panel.appendChild(block('reason', n.reason, !!n.reason));
    panel.appendChild(block('code', data.code[n.code_ref], true));
    panel.appendChild(block('overview.md', n.overview, false));
    panel.appendChild(block('evaluation', JSON.stringify(n.evaluation, null, 1), false));
    panel.appendChild(block('operator', JSON.stringify(n.operator_meta, null, 1), false));
  };
  const first = document.getElementById('ke-node-panel').dataset.selected;
  if(first) window.keShowNode(first);
})();
"""

_CLICK_JS = """
document.getElementById('{plot_id}').on('plotly_click', function(ev){
  const p = ev.points && ev.points[0]; if(p && p.customdata !== undefined) window.keShowNode(p.customdata);
});
"""


def _figure_html(item: NamedFigure, post_script: str | None = None) -> str:
    div = pio.to_html(item.figure, full_html=False, include_plotlyjs=False, div_id=f"ke-{item.name}",
                      config={"displaylogo": False, "responsive": True}, post_script=post_script,
                      default_height=f"{int(item.figure.layout.height or 450)}px")
    caption = f'<p class="caption">{html.escape(item.caption)}</p>' if item.caption else ""
    return f'<div class="figure" data-figure="{html.escape(item.name)}">{caption}{div}</div>'


def _table_html(table: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    note = f'<p class="caption">{html.escape(table.note)}</p>' if table.note else ""
    return (f'<h3 style="font-size:14px;margin:8px 0 2px">{html.escape(table.title)}</h3>{note}'
            f'<table data-table="{html.escape(table.title)}" data-rows="{len(table.rows)}"><thead><tr>{head}</tr>'
            f"</thead><tbody>{body}</tbody></table>")


def _tree_html(report: Report, item: NamedFigure) -> str:
    selected = "" if report.selected is None else str(report.selected)
    return (f'<div class="tree-wrap" id="ke-tree-wrap" data-node-count="{report.node_count or 0}">'
            f'<div class="plot">{_figure_html(item, _CLICK_JS)}</div>'
            f'<aside id="ke-node-panel" data-selected="{selected}"><p>Click a node to see its code, reason, '
            "evaluation and overview.md.</p></aside></div>")


def render(report: Report, generated_at: str) -> str:
    parts = []
    for section in report.sections:
        items = []
        for item in section.items:
            if isinstance(item, NamedFigure):
                tree = report.nodes is not None and f"ke-{item.name}" == TREE_DIV
                items.append(_tree_html(report, item) if tree else _figure_html(item))
            elif isinstance(item, Table):
                items.append(_table_html(item))
            else:
                items.append(f"<p>{html.escape(item)}</p>")
        parts.append(f"<section><h2>{html.escape(section.title)}</h2>{''.join(items)}</section>")
    facts = "".join(f"<span><b>{html.escape(k)}</b> {html.escape(v)}</span>" for k, v in report.facts)
    node_script = ""
    if report.nodes is not None:
        node_script = (f'<script type="application/json" id="ke-node-data">{script_json(report.nodes)}</script>'
                       f"<script>{_PANEL_JS}</script>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(report.title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{_CSS}</style>'
            f'<script type="text/javascript">{get_plotlyjs()}</script></head>'
            f'<body data-report-kind="{report.kind}" data-figure-count="{len(report.figures)}">'
            f"<header><h1>{html.escape(report.title)}</h1><div class=\"facts\">{facts}</div></header>"
            f"<main>{''.join(parts)}</main>{node_script}"
            f"<footer>Rendered from the store by KernelEvolve {__version__} at {html.escape(generated_at)}; "
            "re-run the same 'ke report' command to refresh. Works offline: plotly.js is embedded.</footer>"
            "</body></html>")
