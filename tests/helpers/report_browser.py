"""Opening report pages in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

Playwright is told to use the system browser (``executable_path``); it never downloads one. Where no browser
or no Playwright is installed the tests skip, except under CI=true, where they fail: CI installs both.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path() -> str:
    found = os.environ.get("BROWSER_PATH") or next((p for p in map(shutil.which, BROWSERS) if p), None)
    if found is None:
        message = "no Chromium found (apt-get install chromium); report pages cannot be checked"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@dataclass
class PageCheck:
    """What a loaded report page showed: errors, figures drawn, and the tree's node counts."""

    errors: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    drawn: list[str] = field(default_factory=list)
    declared_figures: int = 0
    node_count_attr: int | None = None
    node_markers_dom: int | None = None
    node_markers_data: int | None = None


# a figure has drawn when its SVG holds at least one trace group (scatter, bar, box) or heat-map image
_DRAWN = "(d => d.querySelector('.main-svg') && d.querySelectorAll('g.trace, g.hm image').length > 0)"
_INSPECT = """() => {
  const DRAWN = """ + _DRAWN + """;
  const figs = [...document.querySelectorAll('.figure .js-plotly-plot')];
  const wrap = document.getElementById('ke-tree-wrap');
  const tree = document.getElementById('ke-tree');
  return {
    figures: figs.map(d => d.id),
    drawn: figs.filter(DRAWN).map(d => d.id),
    declared: Number(document.body.dataset.figureCount),
    nodeAttr: wrap ? Number(wrap.dataset.nodeCount) : null,
    nodeDom: tree ? tree.querySelectorAll('.scatterlayer .trace path.point').length : null,
    nodeData: tree ? tree.data.filter(t => t.meta === 'node').reduce((n, t) => n + t.customdata.length, 0) : null,
  };
}"""


def open_report(browser, path: Path, screenshot: Path):
    """Load ``path``, wait until every figure has drawn, take a full-page screenshot; (page, PageCheck)."""
    check = PageCheck()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("console", lambda m: check.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: check.errors.append(f"pageerror: {e}"))
    page.on("dialog", lambda d: (check.errors.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: check.errors.append(f"network request: {r.url}")
            if not r.url.startswith(("file:", "data:", "blob:", "about:")) else None)
    page.goto(path.resolve().as_uri())
    page.wait_for_function("() => { const f = [...document.querySelectorAll('.figure .js-plotly-plot')];"
                           " return f.length === Number(document.body.dataset.figureCount)"
                           f" && f.every({_DRAWN}); }}", timeout=30_000)
    info = page.evaluate(_INSPECT)
    check.figures, check.drawn, check.declared_figures = info["figures"], info["drawn"], info["declared"]
    check.node_count_attr, check.node_markers_dom = info["nodeAttr"], info["nodeDom"]
    check.node_markers_data = info["nodeData"]
    page.screenshot(path=str(screenshot), full_page=True)
    return page, check


def click_tree_node(page, node_id: int) -> None:
    """Click the tree marker of ``node_id`` where Plotly drew it (axis coordinates -> page pixels)."""
    box = page.evaluate("""(id) => {
      const gd = document.getElementById('ke-tree');
      for (const t of gd.data) {
        if (t.meta !== 'node') continue;
        const i = t.customdata.indexOf(id);
        if (i < 0) continue;
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, r = gd.getBoundingClientRect();
        return {x: r.left + xa._offset + xa.l2p(t.x[i]), y: r.top + ya._offset + ya.l2p(t.y[i])};
      }
      return null;
    }""", node_id)
    assert box is not None, f"node {node_id} has no marker in the tree"
    page.mouse.click(box["x"], box["y"])
    page.wait_for_function("(id) => document.getElementById('ke-node-panel').dataset.nodeId === String(id)",
                           arg=node_id, timeout=10_000)


@pytest.fixture(scope="module")
def browser():
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("playwright is not installed (pip install -e '.[test]')")
        pytest.skip("playwright is not installed")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()
