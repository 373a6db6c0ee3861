"""docs/architecture.md §9 on a real Ray cluster on loopback: a head plus a second node started with ``ray start``.

A campaign of three runs is spread over both nodes' evaluation actors (each node offers one ``hw:cpu``
slot); mid-campaign the actor process on the second node is SIGKILLed. The pool must replace it, retry the
lost evaluation, and the campaign must complete with every node stored exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO_ROOT, _free_port, run_ke
from helpers.store_checks import assert_store_consistent

from kernelevolve.cli.worker_cmd import RAY_CLI
from kernelevolve.store.metadata import MetadataStore

pytestmark = pytest.mark.slow


def _env() -> dict[str, str]:
    # Ray >= 2.5x starts heads with token authentication on; joining nodes and drivers must opt in to send it.
    return {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": REPO_ROOT, "KE_EXECUTOR": "ray",
            "RAY_AUTH_MODE": "token"}


def _ray(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RAY_CLI, *args], capture_output=True, text=True, env=_env(),
                          timeout=180)


def _raylet_pids() -> set[int]:
    out = subprocess.run(["pgrep", "-f", "raylet/raylet"], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


@dataclass
class Cluster:
    address: str
    second_raylet: int


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Cluster]:
    if _raylet_pids():
        pytest.skip("a Ray node is already running on this host; this test starts and stops its own")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    head = _ray("start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=1",
                '--resources={"hw:cpu": 1}', "--include-dashboard=false", "--disable-usage-stats")
    try:
        assert head.returncode == 0, head.stderr[-2000:]
        before = _raylet_pids()
        second = _ray("start", f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=1",
                      '--resources={"hw:cpu": 1}', "--disable-usage-stats")
        assert second.returncode == 0, second.stderr[-2000:]
        new = _raylet_pids() - before
        assert len(new) == 1, f"expected one new raylet for the second node, found {new}"
        yield Cluster(address, new.pop())
    finally:
        _ray("stop", "--force")


def _campaign_file(tmp_path: Path) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text("\n".join([
        'name = "two-node"', "concurrency = 2", "", "[defaults]", "budget = 4", "",
        "[[runs]]", 'op = "swish"', 'hw = "cpu"', 'strategy = "greedy"', "",
        "[[runs]]", 'op = "softmax"', 'hw = "cpu"', 'strategy = "random"', "",
        "[[runs]]", 'op = "swish"', 'hw = "cpu"', 'strategy = "mcts"', "seed = 1", "reuse = false", "",
    ]))
    return path


def _events(log: Path, name: str) -> list[dict]:
    if not log.exists():
        return []
    found = []
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written
        if record.get("event") == name:
            found.append(record)
    return found


def test_campaign_survives_a_killed_worker_on_the_second_node(ray_cluster: Cluster, tmp_path: Path) -> None:
    state = tmp_path / "state"
    log = state / "logs" / "ke.jsonl"
    listed = run_ke("hw", "list", "--ray-address", ray_cluster.address, "--json", env=_env())
    assert listed.returncode == 0, listed.stderr
    assert listed.json()["cluster"]["cpu"]["total"] == 2, "both nodes offer one hw:cpu slot"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kernelevolve.cli.main", "campaign", str(_campaign_file(tmp_path)), "--ray-address",
         ray_cluster.address, "--json", "--state-dir", str(state)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=REPO_ROOT)
    killed = None
    deadline = time.monotonic() + 420
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        on_second = [e for e in _events(log, "evaluator_started") if e["ppid"] == ray_cluster.second_raylet]
        stored = 0
        if (state / "ke.duckdb").exists():
            stored = sum(MetadataStore(state / "ke.duckdb").run_node_counts().values())
        if on_second and stored >= 2:
            killed = on_second[-1]["pid"]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.2)
    assert killed is not None, "the campaign ended (or timed out) before a worker on the second node was seen"
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    summary = json.loads(stdout)
    assert summary["status"] == "completed" and len(summary["runs"]) == 3
    lost = _events(log, "slot_lost")
    assert lost, "the killed actor's evaluation was not reported lost and retried"
    started = _events(log, "evaluator_started")
    assert len({e["node_id"] for e in started}) == 2, "both nodes evaluated"
    assert len(started) >= 3, "the killed actor was replaced by a new one"
    for row in summary["runs"]:
        assert row["status"] == "completed" and row["nodes"] == 4
        assert_store_consistent(state, str(state / "artifacts"), row["run_id"], 4)
