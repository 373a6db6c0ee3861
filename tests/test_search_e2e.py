"""`ke search` end to end on the CPU target with real stores: DuckDB files, local and S3 artifacts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_ke
from helpers.store_checks import assert_store_consistent

from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore


def test_swish_search_show_best_eval(ke, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    started = time.monotonic()
    result = ke("search", "--op", "swish", "--hw", "cpu", "--strategy", "greedy", "--budget", "12", "--json",
                "--state-dir", state)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    summary = result.json()
    assert set(summary) >= {"run_id", "status", "nodes", "simulated", "best"}
    assert summary["status"] == "completed" and summary["nodes"] == 12 and summary["simulated"] is False
    assert set(summary["best"]) >= {"node_id", "fitness", "path"}
    print(f"12-node swish search took {elapsed:.1f} s")
    run_id = summary["run_id"]
    assert_store_consistent(Path(state), str(Path(state) / "artifacts"), run_id, 12)

    tree = ke("show", run_id, "--tree", "--state-dir", state)
    assert tree.returncode == 0
    node_lines = [ln for ln in tree.stdout.splitlines() if "node " in ln and "<-" in ln]
    assert len(node_lines) == 12
    assert all("fitness=" in ln and (" ok " in ln or "error" in ln or "incorrect" in ln) for ln in node_lines)
    assert tree.stdout.splitlines()[1].startswith("root")

    shown = ke("show", run_id[:4], "--json", "--state-dir", state).json()
    assert shown["run"]["run_id"] == run_id and len(shown["nodes"]) == 12
    assert {"node_id", "parent_id", "status", "reason", "fitness"} <= set(shown["nodes"][0])

    runs = ke("runs", "--json", "--state-dir", state).json()["runs"]
    assert runs[0]["run_id"] == run_id and runs[0]["nodes"] == 12 and runs[0]["strategy"] == "greedy"

    out = tmp_path / "k.py"
    best = ke("best", run_id, "--out", str(out), "--state-dir", state)
    assert best.returncode == 0 and out.read_text().strip()
    evaluated = ke("eval", "--op", "swish", "--hw", "cpu", str(out), "--json", "--state-dir", state)
    assert evaluated.returncode == 0, evaluated.stderr
    payload = evaluated.json()
    assert payload["status"] == "ok" and payload["simulated"] is False and payload["fitness"] > 0
    assert {c["name"] for c in payload["cases"]} and all(c["status"] == "ok" for c in payload["cases"])


def test_eval_reports_incorrect_kernel(ke, tmp_path: Path) -> None:
    source = (Path(REPO_ROOT) / "knowledge_base" / "code_samples" / "swish.py").read_text()
    broken = source.replace("tl.sigmoid(", "tl.exp(")
    assert broken != source
    path = tmp_path / "broken.py"
    path.write_text(broken)
    result = ke("eval", "--op", "swish", "--hw", "cpu", str(path), "--json", "--state-dir", str(tmp_path / "s"))
    assert result.returncode == 1
    assert result.json()["status"] == "incorrect" and "exceeds" in result.json()["reason"]


def test_search_stores_every_artifact_in_s3(ke, tmp_path: Path, s3_bucket: str) -> None:
    state = tmp_path / "state"
    result = ke("search", "--op", "swish", "--hw", "cpu", "--budget", "3", "--json", "--state-dir", str(state),
                "--store-url", s3_bucket)
    assert result.returncode == 0, result.stderr
    run_id = result.json()["run_id"]
    assert not (state / "artifacts").exists(), "artifacts must go to S3, not the local default"
    assert_store_consistent(state, s3_bucket, run_id, 3)
    listed = ObjectStore(s3_bucket).list(f"runs/{run_id}/")
    assert sum(ref.endswith("evaluation.json") for ref in listed) == 3
    assert ObjectStore(s3_bucket).list("specs/")
    out = tmp_path / "best.py"
    assert ke("best", run_id, "--out", str(out), "--state-dir", str(state), "--store-url", s3_bucket).returncode == 0
    assert "TritonModel" in out.read_text()


def _start_search(state: Path, budget: int, seed: int = 0, *extra: str, executor: str = "local") -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "KE_EXECUTOR": executor}
    return subprocess.Popen(
        [sys.executable, "-m", "kernelevolve.cli.main", "search", "--op", "swish", "--hw", "cpu", "--budget",
         str(budget), "--seed", str(seed), "--json", "--state-dir", str(state), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO_ROOT,
    )


def test_show_and_runs_work_while_a_search_writes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    proc = _start_search(state, budget=6)
    seen_counts, reads = [], 0
    while proc.poll() is None:
        runs = run_ke("runs", "--json", "--state-dir", str(state))
        if runs.returncode == 0 and runs.json()["runs"]:
            run_id = runs.json()["runs"][0]["run_id"]
            shown = run_ke("show", run_id, "--json", "--state-dir", str(state))
            assert shown.returncode == 0, shown.stderr
            seen_counts.append(len(shown.json()["nodes"]))
            reads += 1
        else:  # before the search creates its store, `ke runs` says so with exit 2, never a crash
            assert runs.returncode == 2 and "no KernelEvolve state" in runs.stderr or runs.returncode == 0
        time.sleep(0.2)
    stdout, stderr = proc.communicate()
    assert proc.returncode == 0, stderr
    assert json.loads(stdout)["nodes"] == 6
    assert reads >= 3 and seen_counts == sorted(seen_counts)
    assert len(set(seen_counts)) >= 2, "the reader should have seen the run grow"


def test_two_searches_share_one_store(tmp_path: Path) -> None:
    state = tmp_path / "state"
    procs = [_start_search(state, budget=3, seed=s) for s in (1, 2)]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outputs]
    run_ids = [json.loads(o[0])["run_id"] for o in outputs]
    assert run_ids[0] != run_ids[1]
    for run_id in run_ids:
        assert_store_consistent(state, str(state / "artifacts"), run_id, 3)


@pytest.mark.parametrize(("kill_after_nodes", "executor", "concurrency"),
                         [(0, "local", 1), (1, "local", 1), (2, "ray", 3)])
def test_sigkill_then_resume(tmp_path: Path, kill_after_nodes: int, executor: str, concurrency: int) -> None:
    """SIGKILL the orchestrator at different moments: before any node (the run row exists, the first
    evaluation is under way), after one node; and after two with three evaluations in flight on Ray actors
    (killing after three local nodes took the same path as after one, and 30 s of CI).
    Resume must redo what was in flight and finish the budget with ids 1..6, valid parents and no candidate
    evaluated twice."""
    state = tmp_path / "state"
    proc = _start_search(state, 6, 0, "--concurrency", str(concurrency), executor=executor)
    meta, run_id = None, None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if (state / "ke.duckdb").exists():
            meta = meta or MetadataStore(state / "ke.duckdb")
            runs = meta.list_runs()
            if runs:
                run_id = runs[0].run_id
                if meta.count_nodes(run_id) >= kill_after_nodes:
                    break
        time.sleep(0.05)
    assert proc.poll() is None, "the search finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = meta.count_nodes(run_id)
    assert kill_after_nodes <= before < 6
    resumed = run_ke("search", "--resume", run_id, "--json", "--concurrency", str(concurrency), "--state-dir",
                     str(state), env={"KE_EXECUTOR": executor})
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.json()["nodes"] == 6, "the budget counts across the resume"
    assert_store_consistent(state, str(state / "artifacts"), run_id, 6)
    assert meta.get_run(run_id).status == "completed"
    again = run_ke("search", "--resume", run_id, "--state-dir", str(state))
    assert again.returncode == 2 and "already completed" in again.stderr


def test_offline_operator_needs_no_key_and_no_network(ke, tmp_path: Path) -> None:
    """Issue #6: the offline operator runs with every LLM variable removed and no endpoint configured."""
    env = {name: "" for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update({"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"})  # any network use fails
    result = ke("search", "--op", "softmax", "--hw", "cpu", "--operator", "offline", "--budget", "3", "--json",
                "--state-dir", str(tmp_path / "s"), env=env)
    assert result.returncode == 0, result.stderr
    assert result.json()["nodes"] == 3 and result.json()["best"]["fitness"] == 1.0
