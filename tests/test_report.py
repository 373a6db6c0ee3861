"""``ke report`` and ``ke aten-sweep --report``: pages rendered from real stores and opened in headless Chromium.

Each page test loads the file (file://, so nothing can be fetched), waits until every figure has drawn,
fails on any console error, page error, dialog or network request, and saves a full-page screenshot under
the test's tmp dir. Run pages must show exactly the run's nodes as tree markers, and clicking one must show
that node's stored code. The runs come from real ``ke`` commands (a simulated MTIA campaign, a CPU ATen
sweep) and from a GPU-like run written through the store API (this machine has no GPU).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_ke
from helpers.report_browser import browser, chromium_path, click_tree_node, open_report  # noqa: F401 - a fixture
from helpers.report_store import HOSTILE_REASON, PLAN, add_remaining_nodes, write_gpu_like_run
from test_cli_bad_input import assert_clean_failure

from kernelevolve.report.campaign_view import running_best, step_band
from kernelevolve.report.cases_view import speedup_spread
from kernelevolve.report.page import script_json
from kernelevolve.report.trajectory_view import best_so_far
from kernelevolve.report.tree_view import ROOT, tidy_layout
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from search.node import Node

H200_MATRIX = Path(REPO_ROOT) / "benchmarks" / "results" / "aten_sweep_h200.json"
CAMPAIGN = """
name = "cmp"
concurrency = 2
[defaults]
budget = 5
[matrix]
ops = ["swish"]
hw = ["mtia-v3"]
strategies = ["greedy", "random"]
seeds = [0, 1]
"""


def _report(state: Path, target: str, out: Path, *extra: str):
    result = run_ke("report", target, "--state-dir", str(state), "--out", str(out), "--json", *extra)
    assert result.returncode == 0, result.stderr
    return result.json()


def _text(page, selector: str) -> str:
    """All text under ``selector``, SVG included (``inner_text`` reads HTML elements only)."""
    return page.evaluate("(s) => document.querySelector(s).textContent", selector)


def _assert_clean(check, screenshot: Path) -> None:
    assert check.errors == [], check.errors
    assert check.figures and check.drawn == check.figures, (check.figures, check.drawn)
    assert check.declared_figures == len(check.figures)
    assert screenshot.stat().st_size > 20_000  # a real full-page screenshot, not a blank frame


@pytest.fixture(scope="module")
def campaign_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real simulated campaign: swish on mtia-v3, greedy and random, two seeds each, 5 nodes per run."""
    state = tmp_path_factory.mktemp("campaign") / "state"
    plan = state.parent / "cmp.toml"
    plan.write_text(CAMPAIGN)
    result = run_ke("campaign", str(plan), "--state-dir", str(state), "--executor", "local", timeout=300)
    assert result.returncode == 0, result.stderr
    return state


def test_run_report_of_a_real_run_in_chromium(campaign_state: Path, browser, tmp_path: Path) -> None:  # noqa: F811
    meta = MetadataStore(campaign_state / "ke.duckdb")
    run = next(r for r in meta.list_runs() if r.strategy == "greedy" and r.seed == 0)
    nodes = meta.nodes(run.run_id)
    out = tmp_path / "run.html"
    summary = _report(campaign_state, run.run_id[:5], out)
    assert (summary["kind"], summary["nodes"]) == ("run", len(nodes))
    assert summary["figures"] == ["tree", "trajectory", "cases", "floor"]  # simulated: timed, no LLM
    page, check = open_report(browser, out, tmp_path / "run.png")
    _assert_clean(check, tmp_path / "run.png")
    assert check.node_count_attr == check.node_markers_dom == check.node_markers_data == len(nodes) == 5
    target = nodes[-1]
    click_tree_node(page, target.node_id)
    panel = page.inner_text("#ke-node-panel")
    assert f"node {target.node_id} ← " in panel and target.status in panel
    code = ObjectStore(str(campaign_state / "artifacts")).get_text(target.path_ref)
    assert code.splitlines()[-1].strip() in page.inner_text("#ke-node-panel details:nth-of-type(2) pre")
    page.screenshot(path=str(tmp_path / "run_clicked.png"))
    page.close()


def test_campaign_report_compares_strategies_over_seeds(campaign_state: Path, browser, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "campaign.html"
    summary = _report(campaign_state, "cmp", out)
    assert (summary["kind"], summary["figures"]) == ("campaign", ["strategies"])
    page, check = open_report(browser, out, tmp_path / "campaign.png")
    _assert_clean(check, tmp_path / "campaign.png")
    assert page.get_attribute("table[data-table='A row per run']", "data-rows") == "4"
    legend = _text(page, "#ke-strategies .legend")
    assert "greedy (median of 2 seeds)" in legend and "random (median of 2 seeds)" in legend
    # per strategy: a band, one thin line per seed and the median line, all drawn
    assert page.evaluate("document.getElementById('ke-strategies').data.length") == 2 * (1 + 2 + 1)
    campaign_id = json.loads(run_ke("runs", "--json", "--state-dir", str(campaign_state)).stdout)["runs"][0][
        "config"]["campaign"]["id"]
    assert _report(campaign_state, campaign_id, tmp_path / "by_id.html")["kind"] == "campaign"
    page.close()


def test_gpu_like_run_report_shows_spreads_floor_and_llm_cost(browser, tmp_path: Path) -> None:  # noqa: F811
    state = tmp_path / "state"
    run_id = write_gpu_like_run(state)
    out = tmp_path / "gpu.html"
    summary = _report(state, run_id, out)
    assert summary["figures"] == ["tree", "trajectory", "cases", "floor", "cost"]
    page, check = open_report(browser, out, tmp_path / "gpu.png")
    _assert_clean(check, tmp_path / "gpu.png")
    assert check.node_count_attr == check.node_markers_dom == len(PLAN)
    table = page.inner_text("table[data-table='Speedups with spreads']")
    assert "4096x4096_fp32" in table and "[" in table  # every timed case, with its spread from the IQR
    assert page.get_attribute("table[data-table='Speedups with spreads']", "data-rows") == "3"
    # the trajectory marks the draft phase: 3 drafts before the first expansion
    assert "3 drafted before the first expansion" in _text(page, "#ke-trajectory")
    # a reason holding markup is shown as text and runs nothing
    click_tree_node(page, 6)
    assert HOSTILE_REASON in page.inner_text("#ke-node-panel")
    assert page.evaluate("window.keHacked === undefined")
    assert "final re-measurement" in _text(page, "#ke-cases")
    page.close()


def test_report_during_a_search_shows_the_state_so_far(browser, tmp_path: Path) -> None:  # noqa: F811
    state = tmp_path / "state"
    run_id = write_gpu_like_run(state, nodes=4, finish=False)
    first = _report(state, run_id, tmp_path / "live.html")
    page, check = open_report(browser, tmp_path / "live.html", tmp_path / "live_4.png")
    assert first["nodes"] == check.node_markers_dom == 4 and check.errors == []
    assert "still in progress" in page.inner_text("main")
    add_remaining_nodes(state, run_id, start=4)
    again = _report(state, run_id, tmp_path / "live.html")
    page.reload()
    page.wait_for_function(f"document.getElementById('ke-tree-wrap').dataset.nodeCount === '{len(PLAN)}'")
    assert again["nodes"] == len(PLAN)
    page.close()


def test_sweep_report_from_the_flag_the_store_and_a_committed_matrix(browser, tmp_path: Path) -> None:  # noqa: F811
    state = tmp_path / "state"
    (tmp_path / "m").mkdir()
    sweep = run_ke("aten-sweep", "--hw", "cpu", "--ops", "abs*,cumsum.default,gather.default", "--report",
                   "--out", str(tmp_path / "m" / "cpu"), "--state-dir", str(state), "--json", timeout=600)
    assert sweep.returncode == 0, sweep.stderr
    files = sweep.json()["files"]
    assert files[2] == str(tmp_path / "m" / "cpu.html")
    page, check = open_report(browser, Path(files[2]), tmp_path / "sweep_cpu.png")
    _assert_clean(check, tmp_path / "sweep_cpu.png")
    assert check.figures == ["ke-coverage"]  # the CPU interpreter times nothing: no speedup distribution
    assert page.evaluate("document.getElementById('ke-coverage').data[2].x.length") == 3  # 3 correct, untimed
    page.close()
    from_store = _report(state, "aten-sweep@cpu", tmp_path / "store.html")
    assert from_store["kind"] == "sweep" and from_store["figures"] == ["coverage"]

    committed = _report(tmp_path / "no_state", str(H200_MATRIX), tmp_path / "h200.html")
    assert committed["figures"] == ["coverage", "speedups"]
    assert not (tmp_path / "no_state").exists()  # a matrix file needs no store
    page, check = open_report(browser, tmp_path / "h200.html", tmp_path / "sweep_h200.png")
    _assert_clean(check, tmp_path / "sweep_h200.png")
    timed_cells = page.evaluate("document.getElementById('ke-coverage').data[1].z.flat()"
                                ".filter(v => v !== null).length")
    assert timed_cells == len(json.loads(H200_MATRIX.read_text())["ops"]) == 160
    page.close()


def test_png_and_svg_figures(tmp_path: Path) -> None:
    state = tmp_path / "state"
    run_id = write_gpu_like_run(state, nodes=5)
    chromium_path()  # kaleido drives the system Chromium: skip without one (fail under CI)
    out = tmp_path / "figs" / "report.html"
    out.parent.mkdir()
    png = _report(state, run_id, out, "--format", "png")
    names = ["tree", "trajectory", "cases", "floor", "cost"]
    assert png["images"] == [str(out.parent / f"report-{n}.png") for n in names]
    for path in png["images"]:
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and Path(path).stat().st_size > 10_000
    svg = _report(state, run_id, out, "--format", "svg")
    assert all(Path(p).read_text(encoding="utf-8").lstrip().startswith("<svg") for p in svg["images"])
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(
        ["report.html"] + [f"report-{n}.{ext}" for n in names for ext in ("png", "svg")])


def test_image_export_without_a_browser_fails_cleanly(tmp_path: Path) -> None:
    state = tmp_path / "state"
    run_id = write_gpu_like_run(state, nodes=2)
    out = tmp_path / "figs" / "report.html"
    out.parent.mkdir()
    result = run_ke("report", run_id, "--state-dir", str(state), "--out", str(out), "--format", "png",
                    env={"BROWSER_PATH": "/bin/false"})
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]  # choreographer's watchdog may print a line of its own first
    assert last.startswith("ke: error: cannot write PNG figures") and "apt-get install chromium" in last
    assert list(out.parent.iterdir()) == []  # neither the page nor any figure


@pytest.mark.parametrize(("args", "fragment"), [
    (["nope"], "no run or campaign matches 'nope'"),
    (["x", "--out", "r.pdf"], "name it *.html"),
    (["x", "--out", "missing/dir/r.html"], "folder missing/dir does not exist"),
    (["x", "--format", "gif"], "'gif' is not one of"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, args: list[str], fragment: str) -> None:
    state = tmp_path / "state"
    if args == ["nope"]:
        write_gpu_like_run(state, nodes=1)
        before = sorted(p.name for p in tmp_path.iterdir())
        result = run_ke("report", *args, "--state-dir", str(state), "--out", str(tmp_path / "r.html"))
        assert result.returncode == 2 and fragment in result.stderr and len(result.stderr.splitlines()) == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        return
    assert_clean_failure(run_ke("report", *args, "--state-dir", str(state)), fragment, state)


def test_bad_matrix_file_and_missing_store(tmp_path: Path) -> None:
    bad = tmp_path / "not_a_matrix.json"
    bad.write_text(json.dumps({"runs": []}))
    state = tmp_path / "state"
    assert_clean_failure(run_ke("report", str(bad), "--out", str(tmp_path / "r.html")), "is not an ATen sweep matrix",
                         state)
    assert_clean_failure(run_ke("report", "abc", "--state-dir", str(state), "--out", str(tmp_path / "r.html")),
                         "no KernelEvolve state", state)
    assert not (tmp_path / "r.html").exists()


# ---- the pieces the figures are computed from ---------------------------------------------------------------

def _node(node_id: int, parent: int | None) -> Node:
    return Node("r", node_id, parent, 1, "h", "ok", 1.0)


def test_tidy_layout_centres_parents_and_survives_deep_chains() -> None:
    pos = tidy_layout([_node(1, None), _node(2, 1), _node(3, 1), _node(4, None)])
    assert pos[2][0] < pos[3][0] and pos[1][0] == (pos[2][0] + pos[3][0]) / 2
    assert pos[ROOT][0] == (pos[1][0] + pos[4][0]) / 2 and pos[2][1] == 2.0
    chain = tidy_layout([_node(1, None)] + [_node(i, i - 1) for i in range(2, 5001)])
    assert chain[5000] == (0.0, 5000.0)


def test_running_bests_and_spreads() -> None:
    assert best_so_far([0.0, 1.5, 0.0, 1.2, 2.0], [True, False, True, False, False]) == [None, 1.5, 1.5, 1.5, 2.0]
    assert running_best([float("nan"), 1.0, 0.5, 3.0]) == [0.0, 1.0, 1.0, 3.0]
    xs, ys = step_band([2.0, 3.0], [1.0, 1.5])
    assert xs == [1, 2, 2, 2, 2, 2, 2, 1] and ys == [2.0, 2.0, 3.0, 3.0, 1.5, 1.5, 1.0, 1.0]
    value, minus, plus = speedup_spread(2.0, 1.0, 0.2)
    assert value == 2.0 and minus == pytest.approx(2.0 - 2.0 / 1.1) and plus == pytest.approx(2.0 / 0.9 - 2.0)
    assert speedup_spread(None, 1.0, 0.1) == (None, 0.0, 0.0)


def test_embedded_json_cannot_close_its_script_element() -> None:
    text = script_json({"reason": "</script><!-- x", "nan": float("nan")})
    assert "<" not in text and ">" not in text
    assert json.loads(text) == {"reason": "</script><!-- x", "nan": None}
