"""``ke sweep DIR``: a tiny corpus of our own in KernelBench's format (two levels), searched offline on the cpu
interpreter as one campaign; the matrix per level; a re-run that redoes nothing; shards joined; ``ke report`` on
the matrix; bad input refused in one line before anything is written."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import run_ke
from test_cli_bad_input import assert_clean_failure

PROBLEM = '''"""{doc}"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self{init_args}):
        super().__init__(){init_body}

    def forward(self, x):
        return {expr}


def get_inputs():
    return [torch.randn({shape})]


def get_init_inputs():
    return [{init_inputs}]
'''


def corpus(root: Path) -> Path:
    """level1: a relu and a row sum; level2: a scale then tanh, and singular values (no offline lowering: a
    failed row); plus a file that is not a problem (skipped)."""
    files = {"level1/1_relu.py": dict(doc="ReLU.", expr="torch.relu(x)", shape="64, 128"),
             "level1/2_row_sum.py": dict(doc="Sum of each row.", expr="torch.sum(x, dim=1)", shape="32, 256"),
             "level2/1_scale_tanh.py": dict(doc="Scale, then tanh.", expr="torch.tanh(x * self.scale)",
                                            shape="16, 64", init_args=", scale", init_body="\n        self.scale = "
                                            "scale", init_inputs="0.5"),
             "level2/2_svdvals.py": dict(doc="Singular values.", expr="torch.linalg.svdvals(x)", shape="8, 8")}
    for name, fields in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(PROBLEM.format(**{"init_args": "", "init_body": "", "init_inputs": "", **fields}))
    (root / "level1" / "helpers.py").write_text("def helper():\n    return 1\n")
    return root


def test_sweep_matrix_resume_shards_and_report(tmp_path: Path) -> None:
    root, state = corpus(tmp_path / "kb"), tmp_path / "state"
    first = run_ke("sweep", str(root), "--hw", "cpu", "--budget", "1", "--concurrency", "2", "--state-dir",
                   str(state), timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    # a problem without a correct kernel is a row of the matrix, not an error: exit 0 once all have verdicts
    assert "4 of 4 runs to go" in first.stderr and first.stdout.strip().splitlines()[-1] == "3/4 correct"
    report = json.loads((state / "sweep_cpu.json").read_text())
    assert [r["op"] for r in report["rows"]] == ["level1/1_relu", "level1/2_row_sum", "level2/1_scale_tanh",
                                                 "level2/2_svdvals"]
    assert all(r["correct"] and r["status"] == "ok" and r["nodes"] == 1 for r in report["rows"][:3])
    svd = report["rows"][3]
    assert (svd["correct"], svd["status"]) == (False, "failed") and "no Triton lowering" in svd["reason"]
    assert (report["levels"]["level2"]["correct"], report["levels"]["level2"]["rate"]) == (1, 0.5)
    assert list(report["levels"]) == ["level1", "level2"]
    # issue #29's goals on the cpu interpreter, not a GPU's
    assert [report["levels"][level]["goal"] for level in ("level1", "level2")] == [0.98, 0.95]
    one = report["levels"]["level1"]
    assert (one["correct"], one["total"], one["rate"]) == (2, 2, 1.0)
    for baseline in ("eager", "compile"):  # the cpu interpreter is untimed: every fast_p is there, and null
        assert one["fast_p"][baseline] == {"0": None, "1": None, "1.5": None, "2": None}
    assert report["offline"] is True and report["finished"] is True
    assert report["campaign"]["status"] == "incomplete"  # the campaign's word for a run that failed
    assert report["command"].startswith("ke sweep ") and report["commit"] and report["torch"]
    assert report["tally"]["nodes"] == 3 and (report["overall"]["correct"], report["overall"]["total"]) == (3, 4)
    page = (state / "sweep_cpu.md").read_text()
    assert "| level1 | 2/2 | 100% |" in page and "| level2 | 1/2 | 50% |" in page
    assert "fast_p vs compile (p = 0 / 1 / 1.5 / 2)" in page and "no Triton lowering" in page
    assert "KernelAgent (Meta)" in page and "1.56x" in page and "this sweep is offline, no LLM" in page

    started = time.monotonic()
    again = run_ke("sweep", str(root), "--hw", "cpu", "--budget", "1", "--concurrency", "2", "--state-dir",
                   str(state), "--json")
    assert again.returncode == 0, again.stderr
    assert time.monotonic() - started < 10, "a finished sweep is answered from the store"  # ~1 s idle
    assert "runs to go" not in again.stderr and "executor" not in again.stderr
    assert again.json()["campaign"]["id"] == report["campaign"]["id"]
    runs = run_ke("runs", "--json", "--state-dir", str(state)).json()["runs"]
    assert len(runs) == 4, "nothing ran twice (the failed problem is a verdict, not retried)"

    parts = []
    for i in range(2):  # each share's matrix from the store, then joined: the same rows as the whole sweep
        part = run_ke("sweep", str(root), "--hw", "cpu", "--shard", f"{i}/2", "--matrix-only", "--state-dir",
                      str(state), "--out", str(tmp_path / f"part{i}"))
        assert part.returncode == 0, part.stderr
        parts.append(str(tmp_path / f"part{i}.json"))
    assert [r["op"] for r in json.loads(Path(parts[1]).read_text())["rows"]] == ["level1/2_row_sum",
                                                                                "level2/2_svdvals"]
    joined = run_ke("sweep", "--merge", *parts, "--out", str(tmp_path / "joined"), "--json")
    assert joined.returncode == 0, joined.stderr
    assert [r["op"] for r in joined.json()["rows"]] == [r["op"] for r in report["rows"]]
    assert joined.json()["shards"] == 2 and joined.json()["levels"]["level1"]["correct"] == 2
    assert len(joined.json()["runs"]) == 1, "shards of one run are one run"
    other = json.loads(Path(parts[1]).read_text()) | {"commit": "0ther00", "only": "level2/*", "seconds": 5.0,
                                                     "date": "2000-01-01T00:00:00+00:00"}
    (tmp_path / "other.json").write_text(json.dumps(other))
    both = run_ke("sweep", "--merge", str(tmp_path / "joined.json"), str(tmp_path / "other.json"), "--out",
                  str(tmp_path / "both"), "--json")
    assert both.returncode == 0, both.stderr
    runs_merged = both.json()["runs"]  # a merge of separate runs keeps each one's provenance; their times add
    assert [run["commit"] for run in runs_merged] == ["0ther00", joined.json()["commit"]]
    assert both.json()["seconds"] == pytest.approx(5.0 + joined.json()["seconds"])
    page = (tmp_path / "both.md").read_text()
    assert "Merged from 2 runs" in page and "commit 0ther00" in page

    html = tmp_path / "sweep.html"
    drawn = run_ke("report", str(state / "sweep_cpu.json"), "--out", str(html), "--json")
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.json()["kind"] == "sweep" and drawn.json()["figures"][0] == "fast_p"
    text = html.read_text()
    assert 'data-figure="fast_p"' in text and 'data-figure="problems"' in text and "KernelAgent" in text


@pytest.mark.parametrize(("args", "fragment"), [
    (["{tmp}/missing"], "does not exist"),
    (["{tmp}/empty"], "no KernelBench-format problem under"),
    (["{tmp}/kb", "--shard", "2/2"], "--shard 2/2: needs 0 <= i < n"),
    (["{tmp}/kb", "--hw", "tpu9"], "tpu9"),
    (["{tmp}/kb", "--strategy", "annealing"], "unknown strategy 'annealing'"),
    (["{tmp}/kb", "--budget", "0"], "--budget must be at least 1"),
    (["{tmp}/kb", "--only", "level9/*"], "no problem of"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, args: list[str], fragment: str) -> None:
    corpus(tmp_path / "kb")
    (tmp_path / "empty").mkdir()
    state = tmp_path / "state"
    argv = [a.format(tmp=tmp_path) for a in args]
    if "--hw" not in argv:
        argv += ["--hw", "cpu"]
    assert_clean_failure(run_ke("sweep", *argv, "--state-dir", str(state)), fragment, state)
    assert not state.exists() and not list(tmp_path.glob("**/sweep_*"))


def test_a_problem_that_does_not_import_is_a_failed_row_and_the_rest_run(tmp_path: Path) -> None:
    """Before: one file importing a module this host lacks (KernelBench's Mamba problems need einops) refused the
    whole sweep in one line, at its plan."""
    root, state = tmp_path / "kb", tmp_path / "state"
    (root / "level3").mkdir(parents=True)
    (root / "level3" / "1_relu.py").write_text(PROBLEM.format(doc="ReLU.", expr="torch.relu(x)", shape="64, 128",
                                                               init_args="", init_body="", init_inputs=""))
    needs = PROBLEM.format(doc="Needs a module.", expr="x", shape="8", init_args="", init_body="", init_inputs="")
    (root / "level3" / "2_needs_a_module.py").write_text("import a_module_this_host_lacks  # noqa\n" + needs)
    result = run_ke("sweep", str(root), "--hw", "cpu", "--budget", "1", "--state-dir", str(state), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "1 of 1 runs to go" in result.stderr and result.stdout.strip().splitlines()[-1] == "1/2 correct"
    rows = {r["op"]: r for r in json.loads((state / "sweep_cpu.json").read_text())["rows"]}
    assert rows["level3/1_relu"]["correct"]
    lacking = rows["level3/2_needs_a_module"]
    assert (lacking["correct"], lacking["status"]) == (False, "failed")
    assert "No module named 'a_module_this_host_lacks'" in lacking["reason"]


def test_retry_failed_searches_a_failed_problem_again_and_only_that(tmp_path: Path) -> None:
    """A failed problem is a verdict a plain re-run keeps; ``--retry-failed`` drives that same run again (a
    host that gained a module, a lowering that grew) and leaves the finished ones alone."""
    root, state = tmp_path / "kb", tmp_path / "state"
    (root / "level1").mkdir(parents=True)
    (root / "level1" / "1_relu.py").write_text(PROBLEM.format(doc="ReLU.", expr="torch.relu(x)", shape="64, 128",
                                                               init_args="", init_body="", init_inputs=""))
    (root / "level1" / "2_svdvals.py").write_text(PROBLEM.format(doc="Singular values.", expr="torch.linalg.svdvals(x)",
                                                                  shape="8, 8", init_args="", init_body="",
                                                                  init_inputs=""))
    base = ("sweep", str(root), "--hw", "cpu", "--budget", "1", "--state-dir", str(state))
    first = run_ke(*base, timeout=300)
    assert first.returncode == 0 and "2 of 2 runs to go" in first.stderr, first.stderr[-3000:]
    plain = run_ke(*base, timeout=300)
    assert plain.returncode == 0 and "runs to go" not in plain.stderr, plain.stderr[-3000:]
    retried = run_ke(*base, "--retry-failed", timeout=300)
    assert retried.returncode == 0, retried.stderr[-3000:]
    assert "1 of 2 runs to go" in retried.stderr and retried.stdout.strip().splitlines()[-1] == "1/2 correct"
    runs = run_ke("runs", "--json", "--state-dir", str(state)).json()["runs"]
    assert len(runs) == 2, "the failed problem's own run was driven again, not a new one"
