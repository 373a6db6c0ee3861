"""``ke campaign FILE.toml``: validation of the file, and resuming the whole campaign after a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from helpers.store_checks import assert_store_consistent
from test_cli_bad_input import assert_clean_failure

from kernelevolve.store.metadata import MetadataStore

GOOD = """
name = "{name}"
concurrency = 2

[defaults]
budget = {budget}

[[runs]]
op = "swish"
hw = "cpu"

[matrix]
ops = ["softmax"]
hw = ["cpu"]
strategies = ["greedy", "random"]
"""


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("name = ", "not valid TOML"),
        ("[[runs]]\nop = 'swish'\nhw = 'cpu'\n", "needs name"),
        ("name = 'x'\n", "no runs"),
        ("name = 'x'\ncolour = 'red'\n[[runs]]\nop = 'swish'\nhw = 'cpu'\n", "unknown key(s) colour"),
        ("name = 'x'\n[[runs]]\nop = 'swish'\nhw = 'cpu'\nbudgett = 3\n", "runs[0]: unknown key(s) budgett"),
        ("name = 'x'\n[[runs]]\nop = 'nope'\nhw = 'cpu'\n", "unknown op 'nope'"),
        ("name = 'x'\n[[runs]]\nop = 'swish'\nhw = 'tpu9'\n", "unknown hardware target 'tpu9'"),
        ("name = 'x'\n[[runs]]\nop = 'swish'\nhw = 'cpu'\nstrategy = 'annealing'\n", "unknown strategy"),
        ("name = 'x'\n[[runs]]\nop = 'swish'\nhw = 'cpu'\nbudget = 0\n", "budget must be a positive integer"),
        ("name = 'x'\nconcurrency = 0\n[[runs]]\nop = 'swish'\nhw = 'cpu'\n", "concurrency must be a positive"),
        ("name = 'x'\n[matrix]\nops = ['swish']\n", "[matrix]: needs 'hw'"),
        ("name = 'x'\n[[runs]]\nop = 'swish'\nhw = 'h100'\n", "no NVIDIA H100"),
    ],
)
def test_bad_campaign_files(ke, tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    state = tmp_path / "state"
    assert_clean_failure(ke("campaign", str(path), "--state-dir", str(state)), fragment, state)


def test_missing_campaign_file(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert_clean_failure(ke("campaign", str(tmp_path / "no.toml"), "--state-dir", str(state)), "does not exist",
                         state)


def _start(path: Path, state: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "KE_EXECUTOR": "local"}
    return subprocess.Popen([sys.executable, "-m", "kernelevolve.cli.main", "campaign", str(path), "--json",
                             "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=REPO_ROOT)


@pytest.mark.slow
def test_campaign_resumes_as_a_whole_after_sigkill(ke, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(GOOD.format(name="resumable", budget=4))
    state = tmp_path / "state"
    proc = _start(path, state)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if (state / "ke.duckdb").exists() and sum(MetadataStore(state / "ke.duckdb").run_node_counts().values()) >= 3:
            break
        time.sleep(0.1)
    assert proc.poll() is None, "the campaign finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    meta = MetadataStore(state / "ke.duckdb")
    before = {r.run_id: meta.count_nodes(r.run_id) for r in meta.list_runs()}
    assert 3 <= sum(before.values()) < 12

    resumed = ke("campaign", str(path), "--json", "--state-dir", str(state))
    assert resumed.returncode == 0, resumed.stderr
    summary = resumed.json()
    assert summary["status"] == "completed" and len(summary["runs"]) == 3
    assert set(before) <= {r["run_id"] for r in summary["runs"]}, "slots reuse the runs created before the kill"
    assert len(meta.list_runs()) == 3, "no slot got a second run"
    for row in summary["runs"]:
        assert row["nodes"] == 4 and row["status"] == "completed"
        assert_store_consistent(state, str(state / "artifacts"), row["run_id"], 4)

    again = ke("campaign", str(path), "--json", "--state-dir", str(state))
    assert again.returncode == 0 and json.loads(again.stdout)["runs"] == summary["runs"]
    assert len(meta.list_runs()) == 3

    path.write_text(GOOD.format(name="resumable", budget=5))
    changed = ke("campaign", str(path), "--state-dir", str(state))
    assert changed.returncode == 2 and "different plan" in changed.stderr
