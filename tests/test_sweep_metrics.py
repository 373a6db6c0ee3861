"""The sweep's per-level figures (kernelevolve.sweep.metrics): KernelBench's fast_p and its edge cases, pure."""

from __future__ import annotations

import pytest

from kernelevolve.sweep.metrics import by_level, correct_rate, fast_p, fast_p_curve, geomean_speedup, level_metrics
from kernelevolve.sweep.problems import Problem, parse_shard, select, shard


def row(correct: bool, eager: float | None = None, compile_: float | None = None, family: str = "level1",
        floor: float | None = None) -> dict:
    return {"op": f"{family}/x", "family": family, "correct": correct, "speedup_vs_eager": eager,
            "speedup_vs_compile": compile_, "fraction_of_floor": floor}


def test_fast_p_counts_correct_and_strictly_faster_over_every_problem() -> None:
    rows = [row(True, 2.0, 1.0), row(True, 0.5, 0.4), row(False, 3.0, 3.0), row(True, 1.5, 2.5)]
    # the incorrect row's speedup never counts, though it is the largest; the denominator is every problem
    assert fast_p(rows, 0, "speedup_vs_eager") == 0.75
    assert fast_p(rows, 1, "speedup_vs_eager") == 0.5
    assert fast_p(rows, 1.5, "speedup_vs_eager") == 0.25  # exactly 1.5 is not faster than 1.5
    assert fast_p(rows, 2, "speedup_vs_eager") == 0.0  # exactly 2 is not faster than 2
    assert fast_p(rows, 1, "speedup_vs_compile") == 0.25  # 1.0 is not > 1
    assert fast_p_curve(rows, [0, 1, 2], "speedup_vs_compile") == [0.75, 0.25, 0.25]
    assert correct_rate(rows) == 0.75


def test_untimed_and_empty_levels_have_no_fast_p() -> None:
    untimed = [row(True), row(True), row(False)]
    assert fast_p(untimed, 0, "speedup_vs_eager") is None and fast_p(untimed, 1, "speedup_vs_compile") is None
    assert fast_p([], 0, "speedup_vs_eager") is None and correct_rate([]) is None
    assert geomean_speedup(untimed, "speedup_vs_eager") is None
    m = level_metrics(untimed)
    assert (m["correct"], m["total"], m["rate"]) == (2, 3, round(2 / 3, 4))
    assert m["timed"] == {"eager": False, "compile": False}
    assert set(m["fast_p"]["eager"]) == {"0", "1", "1.5", "2"} and set(m["fast_p"]["eager"].values()) == {None}
    empty = level_metrics([])
    assert (empty["total"], empty["rate"], empty["fast_p"]["compile"]["0"]) == (0, None, None)


def test_a_correct_row_without_a_speedup_on_a_timed_level_is_not_fast() -> None:
    rows = [row(True, 2.0, None), row(True, 2.0, 1.5)]
    assert fast_p(rows, 0, "speedup_vs_compile") == 0.5  # fast_0 < correct rate: one compile baseline missing
    assert fast_p(rows, 0, "speedup_vs_eager") == 1.0 == correct_rate(rows)  # timed: fast_0 is the correct rate


def test_geomeans_floor_and_levels() -> None:
    rows = [row(True, 2.0, 1.0, floor=0.5), row(True, 0.5, 4.0, floor=0.7), row(False, 100.0, 100.0),
            row(True, 4.0, 1.0, family="level2", floor=0.9), row(False, family="level3")]
    levels = by_level(rows, {"level1": 0.95})
    assert list(levels) == ["level1", "level2", "level3"]
    one = levels["level1"]
    assert one["goal"] == 0.95 and one["geomean_vs_eager"] == pytest.approx(1.0)
    assert one["geomean_vs_compile"] == pytest.approx(2.0) and one["median_fraction_of_floor"] == pytest.approx(0.6)
    assert one["fast_p"]["eager"]["1"] == pytest.approx(1 / 3) and levels["level2"]["fast_p"]["eager"]["2"] == 1.0
    assert levels["level3"]["rate"] == 0.0 and levels["level3"]["fast_p"]["eager"]["0"] is None


def test_only_and_shard_select_in_file_order() -> None:
    from pathlib import Path

    probs = [Problem(f"level{i // 3 + 1}/{i}_p", f"level{i // 3 + 1}", Path(f"/x/{i}.py")) for i in range(6)]
    assert [p.name for p in select(probs, "level2/*, level1/0_*")] == ["level1/0_p", "level2/3_p", "level2/4_p",
                                                                      "level2/5_p"]
    assert [p.name for p in shard(probs, parse_shard("1/4"))] == ["level1/1_p", "level2/5_p"]
    assert shard(probs, parse_shard(None)) == probs
    for bad in ("2/2", "a/b", "1", "0/0", "-1/2"):
        with pytest.raises(Exception, match="--shard"):
            parse_shard(bad)


def test_a_merge_of_runs_on_two_cards_names_both_on_the_page() -> None:
    from kernelevolve.sweep.markdown import markdown

    row = {"op": "level1/x", "family": "level1", "status": "ok", "correct": True, "nodes": 1, "measured": "final",
           "speedup_vs_eager": 1.0, "speedup_vs_compile": 1.0, "gpu": {"name": "NVIDIA H100 80GB HBM3"}}
    report = {"hw": "h100", "budget": 8, "date": "d", "commit": "c", "seconds": 1, "command": "x", "levels": {},
              "device": "NVIDIA H100 80GB HBM3", "rows": [row, {**row, "op": "level1/y"}]}
    assert "Device: NVIDIA H100 80GB HBM3." in markdown(report)
    report["rows"].append({**row, "op": "level1/z", "gpu": {"name": "NVIDIA H200"}})
    page = markdown(report)
    assert "Device: mixed, each row's ratios measured on its own card (NVIDIA H100 80GB HBM3: 2 rows, " \
           "NVIDIA H200: 1 rows)" in page


def test_a_merge_takes_a_re_run_problem_from_the_last_report() -> None:
    from kernelevolve.sweep.markdown import markdown
    from kernelevolve.sweep.matrix import merged

    def report(commit: str, rows: list[dict]) -> dict:
        return {"hw": "cpu", "budget": 1, "date": "d", "commit": commit, "seconds": 10, "command": f"run {commit}",
                "only": commit, "rows": rows, "tally": {"nodes": len(rows), "statuses": {}, "lost": {}}}

    first = report("a", [{**row(True), "op": "level3/1_x", "family": "level3", "status": "ok", "nodes": 1},
                         {**row(False), "op": "level3/2_y", "family": "level3", "status": "timeout", "nodes": 1}])
    retry = report("b", [{**row(True), "op": "level3/2_y", "family": "level3", "status": "ok", "nodes": 1}])
    both = merged([first, retry])
    assert [(r["op"], r["correct"]) for r in both["rows"]] == [("level3/1_x", True), ("level3/2_y", True)]
    assert both["superseded"] == ["level3/2_y"] and both["levels"]["level3"]["correct"] == 2
    assert "each row is from the last run given (a re-run): level3/2_y" in markdown(both)
    assert merged([retry, first])["levels"]["level3"]["correct"] == 1  # the order given decides


def test_a_simulated_sweep_says_so_and_claims_no_gpu_goal() -> None:
    """An mtia-v3 sweep's page read 'from its final re-measurement (interleaved, L2 flushed)' and set it against
    the GPU's correct-rate goals; its figures are the simulator's estimates against a modelled eager."""
    from kernelevolve.sweep.markdown import markdown
    from kernelevolve.sweep.matrix import merged

    sim = {**row(True, eager=0.9), "op": "level1/1_x", "status": "ok", "nodes": 1, "measured": None,
           "simulated": True}
    report = {"hw": "mtia-v3", "budget": 1, "date": "d", "commit": "c", "seconds": 1, "command": "x", "only": "",
              "rows": [sim], "tally": {"nodes": 1, "statuses": {}, "lost": {}}}
    page = markdown(merged([report]))
    assert "**Simulated: no kernel ran on the target.**" in page and "L2 flushed" not in page
    assert merged([report])["levels"]["level1"]["goal"] is None
    timed = {**report, "hw": "h100", "rows": [{**sim, "simulated": False}]}
    assert merged([timed])["levels"]["level1"]["goal"] == 0.97 and "L2 flushed" in markdown(merged([timed]))
