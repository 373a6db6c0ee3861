"""Worker side of the candidate process: start one per evaluation from a preloaded fork server, ask it for
phases with deadlines, and survive whatever it does.

Why a fork server: the worker holds a device context (it judges on the GPU), and a process with a CUDA
context must not ``fork``. The fork server is a clean process that imported torch, Triton and the evaluator
once; forking it costs milliseconds, so each candidate still gets a fresh address space that dies with it
(a crash, a hang, an illegal memory access or a corrupted context costs that one evaluation).
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.forkserver
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

START_TIMEOUT_S = 120.0
_context: Any = None


def fork_server() -> Any:
    """The multiprocessing context whose server preloads the candidate process's imports (started lazily)."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["evaluators.candidate_process"])
    return _context


class CandidateRunner:
    """One candidate process for one evaluation; ``request`` returns (status, payload) like a phase."""

    def __init__(self, workdir: Path, device: str, memory_limit_mb: int | None, wait: bool = True) -> None:
        from evaluators.candidate_process import child_main

        ctx = fork_server()
        self.workdir, self.key = workdir, (device, memory_limit_mb)
        self.log_path = workdir / "candidate.log"
        self.conn, child_end = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=child_main, args=(child_end, str(self.log_path), device, memory_limit_mb),
                                daemon=True)
        self.proc.start()
        # the server that forked it: if that one dies, so does this process (its parent-death signal), and its
        # exit code reads 255 (the server held the real one); the worker must blame the harness, not the kernel
        self.server_pid: int | None = getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None)
        child_end.close()
        self.status, self.reason, self.start_s, self.spawn_s = "starting", "", 0.0, 0.0
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Block until the process has said hello; ``start_s`` is the time spent waiting here."""
        if self.status != "starting":
            return
        started = time.monotonic()
        self.status, hello = self._receive(START_TIMEOUT_S, "start")
        self.start_s = time.monotonic() - started
        self.reason = hello.get("reason", "")
        self.spawn_s = float(hello.get("start_s") or 0.0)  # the process's own fork-to-ready time

    def request(self, message: dict[str, Any], timeout: float, phase: str) -> tuple[str, dict[str, Any]]:
        if self.status != "ok":
            return self.status, {"reason": self.reason}
        try:
            self.conn.send_bytes(json.dumps(message).encode())
        except OSError:
            return self._dead(phase)
        status, payload = self._receive(timeout, phase)
        if status != "ok":
            self.status, self.reason = status, payload.get("reason", "")
        return status, payload

    def _receive(self, timeout: float, phase: str) -> tuple[str, dict[str, Any]]:
        if not self.conn.poll(timeout):
            self.kill()
            return "timeout", {"reason": f"{phase} phase exceeded the {timeout:g} s timeout"}
        try:
            payload = json.loads(self.conn.recv_bytes(maxlength=64 << 20))
        except (EOFError, OSError):
            return self._dead(phase)
        except ValueError:
            self.kill()
            return "crash", {"reason": f"{phase} process sent an unreadable reply"}
        if not isinstance(payload, dict):
            self.kill()
            return "crash", {"reason": f"{phase} process sent an unreadable reply"}
        if "__error__" in payload:
            return "runtime_error", {"reason": str(payload["__error__"])}
        return "ok", payload

    def _dead(self, phase: str) -> tuple[str, dict[str, Any]]:
        self.proc.join(5)
        code = self.proc.exitcode
        if code is None:
            self.kill()
            detail = "stopped answering"
        elif code < 0:
            detail = f"was killed by {signal.Signals(-code).name}"
        else:
            detail = f"exited with code {code}"
        tail = _tail(self.log_path)
        suffix = f"; last output: {tail}" if tail else ""
        return "crash", {"reason": f"{phase} process {detail} without a result{suffix}"}

    def kill(self) -> None:
        pid = self.proc.pid
        if pid is not None and self.proc.exitcode is None:
            for target in (-pid, pid):  # its process group first: kernels may have spawned helpers
                try:
                    os.kill(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self.proc.join(10)

    def close(self) -> None:
        if self.proc.exitcode is None:
            try:
                self.conn.send_bytes(b'{"cmd": "exit"}')
            except OSError:
                pass
            self.proc.join(5)
        self.kill()
        self.conn.close()


def _tail(path: Path, chars: int = 300) -> str:
    try:
        return " ".join(path.read_text(errors="replace")[-chars:].split())
    except OSError:
        return ""


class SpareRunner:
    """Keeps one candidate process started ahead of the next evaluation, so that its fork, imports and device
    context (about 1 s alone, 3 s with 16 slots on a host) overlap the current evaluation instead of adding
    to the next. Isolation is unchanged: the spare is a fresh process that has run nothing yet, and each
    evaluation still gets its own; a spare that died or does not match is discarded and one is started now."""

    def __init__(self) -> None:
        self._spare: CandidateRunner | None = None

    def take(self, device: str, memory_limit_mb: int | None) -> CandidateRunner:
        runner, self._spare = self._spare, None
        if runner is not None and runner.key == (device, memory_limit_mb):
            runner.wait_ready()  # a spare that died answers with a crash status here
        if runner is None or runner.key != (device, memory_limit_mb) or runner.status != "ok":
            if runner is not None:
                discard(runner)
            runner = CandidateRunner(Path(tempfile.mkdtemp(prefix="ke-eval-")), device, memory_limit_mb)
        self._spare = self._start(device, memory_limit_mb)
        return runner

    @staticmethod
    def _start(device: str, memory_limit_mb: int | None) -> CandidateRunner | None:
        try:
            return CandidateRunner(Path(tempfile.mkdtemp(prefix="ke-eval-")), device, memory_limit_mb, wait=False)
        except OSError:
            return None  # no spare this time (out of processes or files): the next evaluation starts its own

    def close(self) -> None:
        if self._spare is not None:
            discard(self._spare)
            self._spare = None


def discard(runner: CandidateRunner) -> None:
    """Stop a candidate process and remove its work folder."""
    runner.close()
    shutil.rmtree(runner.workdir, ignore_errors=True)
