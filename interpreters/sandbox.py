"""Host side of the evaluation worker: start it with a scrubbed environment, feed it jobs, survive it.

Candidates are untrusted, so the worker gets no API keys and no store credentials, and every job has a
deadline here as well as inside the worker: if the worker itself wedges or dies, it is killed and
restarted and the job is reported as a crash instead of stopping the search.

The worker dies with the process that started it (Linux: its parent-death signal, see :func:`worker_command`), and
its fork server and candidate processes die with it, so a stopped or killed ``ke`` leaves no evaluation behind.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from evaluators.job import EvaluationJob
from evaluators.result import EvaluationResult

_SECRET = re.compile(r"(KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|SESSION)", re.I)
_DROP_PREFIXES = ("AWS_", "ANTHROPIC_", "OPENAI_", "KE_S3_", "KE_STORE", "GOOGLE_", "AZURE_", "HF_")
STARTUP_TIMEOUT_S = 180.0
BACKSTOP_S = 60.0
_PR_SET_PDEATHSIG = 1

# The worker's first step, before it becomes ``python -m evaluators.worker`` by exec (which keeps the setting): die
# by SIGKILL when the starting thread's process dies; if it died before prctl, exit (nobody reads our answers).
_BOOT = f"""\
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl({_PR_SET_PDEATHSIG}, signal.SIGKILL)
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
os.execv(sys.executable, [sys.executable, "-m", "evaluators.worker"])
"""


def worker_command() -> list[str]:
    """The worker's command line; on Linux through a boot step that ties its life to this process.

    Why: a worker busy with an evaluation notices that its parent is gone only when it next reads stdin, which
    may be minutes later (and until then it and its candidates hold the device's memory); a ``ke`` killed by
    SIGKILL (``timeout -s KILL``, the OOM killer) runs no cleanup at all. The setting belongs to the *thread* that
    starts the worker: the pools start workers from their own threads, which live as long as the pool."""
    if not sys.platform.startswith("linux"):
        return [sys.executable, "-m", "evaluators.worker"]
    return [sys.executable, "-c", _BOOT, str(os.getpid())]


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k) and not k.startswith(_DROP_PREFIXES)}
    env.update(extra or {})
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


class EvaluationWorker:
    """One long-lived ``python -m evaluators.worker`` process; not thread-safe (one job at a time)."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self._env = scrubbed_env(env)
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._ids = itertools.count(1)
        self.restarts = 0
        self._closed = False
        self._lock = threading.Lock()  # close() may come from another thread while a pool thread starts the worker

    def start(self) -> None:
        with self._lock:
            if self._closed:  # a pool closed under a running request: never start a worker nobody will stop
                raise RuntimeError("evaluation worker is closed")
            self._proc = subprocess.Popen(
                worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True, env=self._env, start_new_session=True,
            )
            self._lines = queue.Queue()
            threading.Thread(target=self._pump, args=(self._proc, self._lines), daemon=True).start()
        hello = self._read(STARTUP_TIMEOUT_S)
        if hello is None or not json.loads(hello).get("ready"):
            self._stop()
            raise RuntimeError("evaluation worker failed to start (is torch/triton importable?)")

    @staticmethod
    def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def _read(self, timeout: float) -> str | None:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def evaluate(self, job: EvaluationJob | dict[str, Any]) -> EvaluationResult:
        if self._proc is None or self._proc.poll() is not None:
            self.start()
        proc = self._proc
        if proc is None or proc.stdin is None:  # closed from another thread since start()
            raise RuntimeError("evaluation worker is closed")
        job = dataclasses.replace(EvaluationJob.coerce(job), id=next(self._ids))
        timeout = float(job.timeout_s)
        # candidate phase + judge + timing each have their own deadline inside the worker
        backstop = timeout + max(timeout, 300.0) + (max(timeout, 600.0) if job.device != "cpu" else 0)
        try:
            proc.stdin.write(json.dumps(job.to_dict()) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._restart()
            return EvaluationResult.failure("crash", "evaluation worker died before the job was sent")
        while True:
            line = self._read(backstop + BACKSTOP_S)
            if line is None:
                self._restart()
                return EvaluationResult.failure("crash", "evaluation worker stopped answering; restarted")
            reply = json.loads(line)
            # a node waiting for device memory (evaluators/admission.py) says so every 10 s, and every judged
            # call of the protocol says it ended: each such line restarts the deadline above, which bounds one
            # step (a call, its judgement, the timing), not the six calls and a re-verification together
            if reply.get("id") == job.id and "result" in reply:
                return EvaluationResult.from_dict(reply["result"])

    def _restart(self) -> None:
        self._stop()
        self.restarts += 1

    def close(self) -> None:
        """Kill the worker (its whole session) for good: a later evaluate() raises instead of starting one."""
        with self._lock:
            self._closed = True
        self._stop()

    def _stop(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()

    def __enter__(self) -> EvaluationWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
