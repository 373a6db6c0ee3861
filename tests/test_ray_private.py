"""How runs meet Ray (issue #30 points 4 and 5): a private instance by default, checks before any executor.

A cluster found on the host (here: a stale /tmp/ray/ray_current_cluster, moved under a private RAY_TMPDIR so that
no other test or user is touched) is never joined; only ``--ray-address`` or ``RAY_ADDRESS`` name one. A bad or
finished plan is refused before any executor starts: the tests name an address where nothing listens, so that
starting (or joining) Ray would fail with Ray's error instead of the command's own answer.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_ke

NOWHERE = "127.0.0.1:1"  # a Ray address where nothing answers: joining it fails at once


@pytest.fixture
def ray_tmp() -> Iterator[Path]:
    """A short RAY_TMPDIR (Ray's socket paths must fit 107 bytes) holding a stale cluster file."""
    folder = Path(tempfile.mkdtemp(prefix="kr", dir="/tmp"))
    (folder / "ray").mkdir()
    (folder / "ray" / "ray_current_cluster").write_text(NOWHERE + "\n")
    yield folder
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _ray_env(ray_tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return {**env, "KE_EXECUTOR": "ray", "RAY_TMPDIR": str(ray_tmp), "RAY_USAGE_STATS_ENABLED": "0", **extra}


def _ray_processes(ray_tmp: Path) -> list[str]:
    """Processes of a Ray instance kept under ``ray_tmp`` (GCS, raylet and agents name their session folder)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(ray_tmp) in cmd:
            found.append(f"{name}: {cmd[:120]}")
    return found


@pytest.mark.slow
def test_a_search_starts_a_private_ray_and_never_joins_a_stale_cluster(ray_tmp: Path, tmp_path: Path) -> None:
    """Before: ``cannot join the Ray cluster at None: ... resources must not be provided`` (exit 2)."""
    result = run_ke("search", "--op", "swish", "--hw", "cpu", "--budget", "1", "--no-reuse",
                    "--state-dir", str(tmp_path / "state"), env=_ray_env(ray_tmp), timeout=240)
    assert result.returncode == 0, result.stderr
    assert "address=local" in result.stderr  # the log line ray_connected: its own instance
    assert "Token authentication" not in result.stderr + result.stdout
    deadline = time.monotonic() + 10
    while _ray_processes(ray_tmp) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _ray_processes(ray_tmp), "the private Ray instance outlived ke"


def test_a_named_cluster_is_joined_and_local_means_private(ray_tmp: Path, tmp_path: Path) -> None:
    """RAY_ADDRESS names a cluster as --ray-address does (here one that is down: refused in one line)."""
    state = str(tmp_path / "state")
    for env, args in (({"RAY_ADDRESS": NOWHERE}, ()), ({}, ("--ray-address", NOWHERE))):
        result = run_ke("search", "--op", "swish", "--hw", "cpu", "--budget", "1", "--state-dir", state, *args,
                        env=_ray_env(ray_tmp, **env), timeout=120)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines()[-1].startswith(f"ke: error: cannot join the Ray cluster at {NOWHERE}")
        assert not (tmp_path / "state").exists()  # nothing written for a run that never started


UNSUPPORTED = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.linalg.inv(x)


def get_inputs():
    return [torch.randn(2, 4, 4)]


def get_init_inputs():
    return []
'''


def test_an_op_the_offline_operator_cannot_draft_is_refused_before_ray(ray_tmp: Path, tmp_path: Path) -> None:
    """Before: Ray started, then the run failed 0/2 and stayed in the store as ``failed``."""
    spec = tmp_path / "inv.py"
    spec.write_text(UNSUPPORTED, encoding="utf-8")
    result = run_ke("search", "--op", str(spec), "--hw", "cpu", "--budget", "2", "--state-dir",
                    str(tmp_path / "state"), env=_ray_env(ray_tmp, RAY_ADDRESS=NOWHERE), timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "ke: error: offline lowering of 'inv' failed: no Triton lowering for a graph input of kind TOKEN"]
    assert not (tmp_path / "state").exists()


CAMPAIGN = """
name = "tiny"
concurrency = 1
[defaults]
hw = "cpu"
budget = 1
reuse = false
[[runs]]
op = "swish"
"""


def test_a_finished_or_changed_campaign_is_answered_before_any_executor(ray_tmp: Path, tmp_path: Path) -> None:
    """Before: each started Ray first (10 s on 2 cores); here starting it would fail (RAY_ADDRESS is down)."""
    plan = tmp_path / "tiny.toml"
    plan.write_text(CAMPAIGN, encoding="utf-8")
    state = ("--state-dir", str(tmp_path / "state"))
    first = run_ke("campaign", str(plan), *state, env={"KE_EXECUTOR": "local"}, timeout=240)
    assert first.returncode == 0, first.stderr
    ray = _ray_env(ray_tmp, RAY_ADDRESS=NOWHERE)
    started = time.monotonic()
    again = run_ke("campaign", str(plan), *state, env=ray, timeout=60)
    took = time.monotonic() - started
    assert again.returncode == 0, again.stderr
    assert "campaign tiny" in again.stdout and "completed" in again.stdout
    assert took < 10, f"a finished campaign took {took:.1f} s"  # about 2 s on 2 idle cores (torch's import)
    plan.write_text(CAMPAIGN.replace("budget = 1", "budget = 2"), encoding="utf-8")
    changed = run_ke("campaign", str(plan), *state, env=ray, timeout=60)
    assert changed.returncode == 2
    assert changed.stderr.strip().splitlines() == [
        "ke: error: campaign 'tiny' already exists with a different plan; give the changed file a new name "
        "(the stored campaign is kept as it is)"]


def test_a_finished_aten_sweep_slice_starts_no_executor(ray_tmp: Path, tmp_path: Path) -> None:
    """Before: ``ke aten-sweep`` started its executor (Ray: 10 s on 2 cores) before reading its plan, so a
    re-run of a finished slice paid for Ray; here starting it would fail, as RAY_ADDRESS is down."""
    args = ("aten-sweep", "--hw", "cpu", "--ops", "abs.default", "--state-dir", str(tmp_path / "state"))
    first = run_ke(*args, env={"KE_EXECUTOR": "local"}, timeout=240)
    assert first.returncode == 0, first.stderr
    started = time.monotonic()
    again = run_ke(*args, env=_ray_env(ray_tmp, RAY_ADDRESS=NOWHERE), timeout=60)
    took = time.monotonic() - started
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().splitlines()[-1] == "1/1 correct"
    assert "1 already done" in again.stderr and "Ray" not in again.stderr
    assert took < 10, f"a finished slice took {took:.1f} s"  # about 1.5 s idle; another test runs beside it
