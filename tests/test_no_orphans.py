"""No orphans (issue #28 item 5): after SIGINT, SIGTERM or SIGKILL of ``ke search`` (``timeout`` sends SIGTERM,
``timeout -s KILL`` SIGKILL), no process of the run is alive 10 s later; on a GPU host, none holds device memory.

Each test starts a real search whose evaluations are slow on purpose: the op's reference sleeps inside the
evaluator's processes (only there: they alone run with TRITON_INTERPRET=1), so a worker left behind is busy
for a minute and does not notice its parent is gone. The test collects the search's process tree from /proc
while it runs (the evaluation worker has its own session and survivors are re-parented, so the tree is walked
from every pid seen so far, not only from ``ke``), signals ``ke``, and requires every one of them dead within
10 s. A zombie counts as dead: it holds no memory, device or host.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from kernelevolve import interrupts
from kernelevolve.store.metadata import MetadataStore

GRACE_S = 10.0
START_TIMEOUT_S = 150.0  # until a candidate process exists; generous for a loaded 2-core CI machine

# Named swish.py so the offline operator drafts from the swish samples; the sleep keeps a node in evaluation.
SLOW_SWISH = '''
import os
import time

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x):
        if os.environ.get("TRITON_INTERPRET") == "1":  # the evaluator's processes only, never ke itself
            time.sleep(60)
        return x * torch.sigmoid(x)


def get_inputs(device="cpu"):
    return {"4096": (torch.randn(4096, device=device),)}
'''

Identity = tuple[int, str]  # (pid, start time): a pid reused by an unrelated process is not the same process


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(ppid, state, start time) of a live process, or None; a zombie reads as gone (it holds no memory)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    state, ppid, start = fields[0], int(fields[1]), fields[19]
    return None if state in ("Z", "X") else (ppid, state, start)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


@dataclass
class ProcessTree:
    """Every process seen below ``root`` so far, with its command line."""

    root: int
    seen: dict[Identity, str] = field(default_factory=dict)

    def scan(self) -> None:
        table = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (st := _stat(int(name))) is not None:
                table[int(name)] = st
        parents = {self.root} | {pid for pid, _ in self.seen}
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _, start) in table.items():
                if ppid in parents and pid not in parents:
                    parents.add(pid)
                    self.seen.setdefault((pid, start), _cmdline(pid))
                    grew = True

    def alive(self) -> dict[Identity, str]:
        """Live processes with their command lines read again: one first seen between fork and exec showed its
        parent's command line (a GCS caught that way was once never recognised, and a test waited 150 s)."""
        live = {}
        for (pid, start), cmd in self.seen.items():
            if (st := _stat(pid)) is not None and st[2] == start:
                live[(pid, start)] = self.seen[(pid, start)] = _cmdline(pid) or cmd
        return live

    def reap(self, proc: subprocess.Popen) -> None:
        """Kill whatever of the tree is still alive, and ``ke`` itself: a failed test leaves nothing to the next."""
        for pid, _ in self.alive():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()

    def has_candidate(self) -> bool:
        """A worker, its fork server, and a process forked from that server (a candidate) are all up."""
        live = {pid: cmd for (pid, _), cmd in self.alive().items()}
        servers = {pid for pid, cmd in live.items() if "multiprocessing.forkserver" in cmd}
        worker = any(cmd.endswith("-m evaluators.worker") for cmd in live.values())
        return worker and any((st := _stat(pid)) is not None and st[0] in servers for pid in live)


def _slow_spec(tmp_path: Path) -> Path:
    folder = tmp_path / "spec"
    folder.mkdir()
    path = folder / "swish.py"
    path.write_text(SLOW_SWISH, encoding="utf-8")
    return path


def _default_signals() -> None:
    """What ``ke`` started from a terminal has: default SIGINT/SIGTERM/SIGHUP. A test run launched in the
    background (``cmd &`` in a script) inherits SIGINT ignored, which ``ke`` rightly keeps ignoring (nohup)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _start(tmp_path: Path, executor: str) -> tuple[subprocess.Popen, Path]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "RAY_ADDRESS")}
    env.update(PYTHONPATH=REPO_ROOT, KE_EXECUTOR=executor, RAY_USAGE_STATS_ENABLED="0",
               RAY_ADDRESS="local")  # Ray: always a private cluster, never one found running on this host
    state = tmp_path / "state"
    err = (tmp_path / "stderr.txt").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kernelevolve.cli.main", "search", "--op", str(_slow_spec(tmp_path)), "--hw", "cpu",
         "--budget", "20", "--no-reuse", "--state-dir", str(state)],
        stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=REPO_ROOT,
        start_new_session=True,  # its own process group, as a shell job has: SIGINT goes to that group
        preexec_fn=_default_signals)
    err.close()
    return proc, state


def _stderr(tmp_path: Path) -> str:
    return (tmp_path / "stderr.txt").read_text(errors="replace")[-2000:]


def _signal_mid_evaluation(tmp_path: Path, executor: str, signum: int,
                           group: bool = False) -> tuple[subprocess.Popen, Path, list[str]]:
    """Start a search, signal it once a candidate process exists; returns what is still alive after GRACE_S.
    ``group``: signal ke's whole process group, as Ctrl-C in a terminal and ``timeout`` do; else ke alone, as
    ``kill PID`` and the OOM killer do (the harder case: nothing else hears it)."""
    proc, state = _start(tmp_path, executor)
    tree = ProcessTree(proc.pid)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not tree.has_candidate():
            assert proc.poll() is None, f"ke exited ({proc.returncode}) before evaluating: {_stderr(tmp_path)}"
            assert time.monotonic() < deadline, (f"no candidate process within {START_TIMEOUT_S:.0f} s: "
                                                 f"{_stderr(tmp_path)} {list(tree.alive().values())}")
            tree.scan()
            time.sleep(0.1)
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        signalled = time.monotonic()
        while time.monotonic() - signalled < GRACE_S:
            tree.scan()  # a fork server may still fork after the signal; those count as well
            proc.poll()  # reap ke: our own zombie would otherwise read as alive
            if not tree.alive() and proc.returncode is not None:
                break
            time.sleep(0.1)
        proc.poll()
        left = [f"{pid}: {cmd[:120]}" for (pid, _), cmd in tree.alive().items()]
        print(f"{signal.Signals(signum).name} to ke ({executor}): {len(tree.seen)} processes seen, "
              f"{'all' if not left else len(tree.seen) - len(left)} gone {time.monotonic() - signalled:.1f} s after")
        if proc.returncode is None:
            left.append(f"{proc.pid}: ke itself")
        return proc, state, left
    finally:
        tree.reap(proc)


def _assert_interrupted(proc: subprocess.Popen, state: Path, tmp_path: Path) -> None:
    """The interrupt path ran: exit 130 with the one-line message, and the run is stored as interrupted."""
    err = _stderr(tmp_path)
    assert proc.returncode == 130, f"exit {proc.returncode}: {err}"
    last = err.splitlines()[-1]
    assert last.startswith("ke: error: interrupted; "), err
    assert [r.status for r in MetadataStore(state / "ke.duckdb").list_runs()] == ["interrupted"]


def test_sigterm_is_an_interrupt_and_the_old_handlers_come_back() -> None:
    before = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
    with pytest.raises(KeyboardInterrupt), interrupts.handled(process=False):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at the next bytecode; never reached
    assert {s: signal.getsignal(s) for s in interrupts.SIGNALS} == before


# A cleanup that would take 30 s: the first SIGTERM starts it, the second must end the process at once.
_SLOW_CLEANUP = """
import sys, time
from kernelevolve import interrupts
with interrupts.handled(process=True):
    try:
        print("ready", flush=True)
        time.sleep(30)
    except KeyboardInterrupt:
        print("cleaning up", flush=True)
        time.sleep(30)
"""


def test_a_second_signal_ends_a_slow_cleanup_at_once() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_CLEANUP], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": REPO_ROOT}, preexec_fn=_default_signals)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout.readline() == "cleaning up\n"
        started = time.monotonic()
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(timeout=5) == 130 and time.monotonic() - started < 5
        assert "ke: error: signalled again; exiting now" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_local_search_interrupted_leaves_no_process(tmp_path: Path, signum: int) -> None:
    proc, state, left = _signal_mid_evaluation(tmp_path, "local", signum, group=signum == signal.SIGINT)
    assert not left, f"alive {GRACE_S:.0f} s after {signal.Signals(signum).name}: {left}"
    _assert_interrupted(proc, state, tmp_path)


def test_local_search_killed_leaves_no_process(tmp_path: Path) -> None:
    """SIGKILL runs no handler in ke: the evaluation worker must die with its parent by itself."""
    proc, _, left = _signal_mid_evaluation(tmp_path, "local", signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert not left, f"alive {GRACE_S:.0f} s after SIGKILL: {left}"


# SIGTERM (and SIGINT, SIGKILL) of a Ray search: tests/test_ray_interrupts.py.
