"""Signals under the Ray executor (issue #30 points 1, 2, 3, 6 and 11), with a real private Ray and real signals.

After SIGINT (Ctrl-C: the whole process group) or SIGTERM (``kill``: ke alone), whether Ray is still starting or
an evaluation is running, ``ke`` must exit within 10 s with exit code 130 and one line, leave its run
``interrupted`` (resumable), and leave no process behind (GCS, raylet, agents, actors, evaluation workers).
Before: a signal during Ray's start could hang for ever (a pool thread started a second, resource-less Ray),
crash with ``release unlocked lock``, or print Ray's ``slot lost`` and ``SIGTERM handler`` lines.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from test_no_orphans import GRACE_S, START_TIMEOUT_S, ProcessTree, _default_signals, _slow_spec

from kernelevolve.store.metadata import MetadataStore

pytestmark = pytest.mark.slow
INTERRUPTED = "ke: error: interrupted; "
# What a search prints on stderr as it goes (progress, info log lines); anything else is a message.
PROGRESS = re.compile(r"^(\[.*\]|\S+ \S+ \[info\s*\] .*)$")


def _start(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "RAY_ADDRESS")}
    env.update(PYTHONPATH=REPO_ROOT, KE_EXECUTOR="ray", RAY_USAGE_STATS_ENABLED="0")
    state = tmp_path / "state"
    with (tmp_path / "stderr.txt").open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernelevolve.cli.main", "search", "--op", str(_slow_spec(tmp_path)), "--hw",
             "cpu", "--budget", "20", "--no-reuse", "--state-dir", str(state)],
            stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=REPO_ROOT, start_new_session=True,
            preexec_fn=_default_signals)
    return proc, state


def _messages(tmp_path: Path) -> list[str]:
    lines = (tmp_path / "stderr.txt").read_text(errors="replace").splitlines()
    return [line for line in lines if line.strip() and not PROGRESS.match(line)]


def _stop(tmp_path: Path, signum: int, when: str) -> tuple[subprocess.Popen, Path, float, list[str]]:
    """Signal ``ke`` once ``when`` is reached ("start-up": Ray's GCS is up, no actor yet; "evaluating": a
    candidate process runs); returns (process, state, seconds to exit, processes alive GRACE_S after)."""
    proc, state = _start(tmp_path)
    tree = ProcessTree(proc.pid)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (tree.has_candidate() if when == "evaluating" else
                   any("gcs_server" in cmd for cmd in tree.alive().values())):
            assert proc.poll() is None, f"ke exited ({proc.returncode}) early: {_messages(tmp_path)}"
            assert time.monotonic() < deadline, (f"not {when} within {START_TIMEOUT_S:.0f} s: "
                                                 f"{_messages(tmp_path)} {list(tree.alive().values())}")
            tree.scan()
            time.sleep(0.05)
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)  # Ctrl-C: the terminal signals the whole group
        else:
            os.kill(proc.pid, signum)
        signalled = time.monotonic()
        exited = None
        while time.monotonic() - signalled < GRACE_S:
            tree.scan()
            if proc.poll() is not None and exited is None:
                exited = time.monotonic() - signalled
            if exited is not None and not tree.alive():
                break
            time.sleep(0.1)
        left = [f"{pid}: {cmd.replace(sys.prefix, '')[:160]}" for (pid, _), cmd in tree.alive().items()]
        if proc.poll() is None:
            left.append(f"{proc.pid}: ke itself")
        return proc, state, exited if exited is not None else float("inf"), left
    finally:
        tree.reap(proc)


def _assert_clean_interrupt(tmp_path: Path, signum: int, when: str) -> None:
    proc, state, took, left = _stop(tmp_path, signum, when)
    messages = _messages(tmp_path)
    assert took <= GRACE_S, f"ke still running {GRACE_S:.0f} s after {signal.Signals(signum).name}: {messages}"
    assert proc.returncode == 130, f"exit {proc.returncode}: {messages}"
    assert len(messages) == 1 and messages[0].startswith(INTERRUPTED), messages
    assert not left, f"alive {GRACE_S:.0f} s after {signal.Signals(signum).name}: {left}"
    if (state / "ke.duckdb").exists():  # a signal during Ray's start comes before the run is stored
        assert [r.status for r in MetadataStore(state / "ke.duckdb").list_runs()] == ["interrupted"]


def test_ctrl_c_while_ray_starts(tmp_path: Path) -> None:
    _assert_clean_interrupt(tmp_path, signal.SIGINT, "start-up")


def test_ctrl_c_mid_evaluation_under_ray(tmp_path: Path) -> None:
    _assert_clean_interrupt(tmp_path, signal.SIGINT, "evaluating")


def test_sigterm_mid_evaluation_under_ray(tmp_path: Path) -> None:
    _assert_clean_interrupt(tmp_path, signal.SIGTERM, "evaluating")


def test_sigkill_of_ke_alone_under_ray(tmp_path: Path) -> None:
    """kill -9 runs no handler: the private instance's GCS and raylet die with ke (Ray's own fate sharing), its
    actors and their evaluation workers with the raylet, and the raylet's agents learn of it through a pipe."""
    proc, _, _, left = _stop(tmp_path, signal.SIGKILL, "evaluating")
    assert proc.returncode == -signal.SIGKILL
    assert not left, f"alive {GRACE_S:.0f} s after SIGKILL: {left}"
