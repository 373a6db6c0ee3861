"""The candidate process: the only place untrusted code runs, one fresh process per evaluation.

It is forked from a fork server that has already imported torch, Triton and the evaluator (seconds of work
paid once per slot, not per candidate), and it creates its own device context. Within one evaluation it
keeps the candidate loaded and compiled across the phases the worker asks for (check, re-check, simulate,
time), so nothing is loaded, compiled or copied twice. The reference's outputs are never in this process:
the worker judges. Every message is JSON (the worker never unpickles what this process writes).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import time
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import torch
import torch._dynamo  # noqa: F401 - the guard's first TorchDispatchMode imports it (~3 s): pay it in the server
import triton  # noqa: F401

from evaluators import correctness, memory_probe, performance  # noqa: F401 - preloaded with the server
from evaluators.candidate import CandidateError, load_candidate_class
from evaluators.device_lock import shared_device
from evaluators.numerics import configure_numerics
from evaluators.spec import OperatorSpec, load_spec
from evaluators.tensor_transport import send_outputs
from evaluators.timed_checks import TimedOutputError

_PR_SET_PDEATHSIG = 1


def child_main(conn: Connection, log_path: str, device: str, memory_limit_mb: int | None) -> None:
    """Serve one evaluation's commands until ``exit`` (or the worker goes away)."""
    started = time.monotonic()
    _setup(log_path, device, memory_limit_mb)
    session = _Session(device, str(Path(log_path).parent))
    if device == "cuda":
        torch.zeros(1, device="cuda")  # the context, before the first command
    _send(conn, {"ready": True, "pid": os.getpid(), "start_s": round(time.monotonic() - started, 3)})
    while True:
        try:
            message = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            break
        if message.get("cmd") == "exit":
            break
        try:
            reply = session.measured(message)
        except SystemExit as exc:
            print(f"candidate raised SystemExit({exc.code})", file=sys.stderr)
            sys.stderr.flush()
            os._exit(3)
        except BaseException as exc:  # noqa: BLE001 - report every failure of untrusted code
            reply = {"__error__": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-4000:]}
        _send(conn, reply)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _send(conn: Connection, payload: dict[str, Any]) -> None:
    conn.send_bytes(json.dumps(payload).encode())


class _Session:
    """One candidate's state across commands: its spec, class and last outputs (kept alive for the judge)."""

    def __init__(self, device: str, workdir: str) -> None:
        self.device, self.workdir = device, workdir
        self.before = correctness.machinery_state()  # before any untrusted code is imported
        self.spec: OperatorSpec | None = None
        self.cls: type[torch.nn.Module] | None = None
        self.outputs: dict[str, list[torch.Tensor]] = {}
        self.seed_check: correctness.SeedCheck | None = None  # the seed between its first and second call

    def _load(self, message: dict[str, Any]) -> tuple[OperatorSpec, type[torch.nn.Module]]:
        if self.spec is None:
            self.spec = load_spec(message["spec_path"])
        if self.cls is None:
            self.cls = load_candidate_class(Path(message["candidate_path"]))
        return self.spec, self.cls

    def measured(self, message: dict[str, Any]) -> dict[str, Any]:
        """One command, with this process's device memory during it: ``peak_bytes``, its peak allocation, and
        ``held_bytes``, what stays allocated while the worker judges (the outputs kept for it), and
        ``scratch_bytes``, the kernels' own working memory beyond their outputs (:mod:`evaluators.memory_probe`).
        The worker adds these to its own to get the evaluation's peak across both processes (issue #28)."""
        if self.device != "cuda":
            return self.handle(message)
        memory_probe.reset()
        reply = self.handle(message)
        reply["peak_bytes"], reply["held_bytes"] = memory_probe.peak(), torch.cuda.memory_allocated()
        reply["scratch_bytes"] = memory_probe.scratches()
        return reply

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        self.outputs = {}  # the judge has answered: the previous outputs may go
        command = message["cmd"]
        if self.cls is not None and correctness.machinery_state()[0] != self.before[0]:
            return {"status": "rejected", "reason": "the candidate modified the evaluator's checking machinery"}
        if command == "check":
            return self._check(message)
        if command == "simulate":
            from evaluators.simulation import simulate

            spec, _ = self._load(message)
            return {"status": "ok", "simulation": simulate(spec, message["candidate_path"], message["hardware"])}
        if command == "time":
            spec, cls = self._load(message)
            t0 = time.monotonic()
            try:
                perf = performance.measure(spec, cls, message["candidate_path"], self.device, **message["options"])
            except TimedOutputError as exc:  # a sampled timed call returned a stale or undone output
                return {"status": "incorrect", "reason": str(exc)}
            return {"status": "ok", "perf": perf, "seconds": round(time.monotonic() - t0, 3)}
        raise ValueError(f"unknown command {command!r}")

    def _check(self, message: dict[str, Any]) -> dict[str, Any]:
        """One call of one seed (``call`` "1" starts the seed, "2" finishes it): the worker judges in between."""
        try:
            spec, cls = self._load(message)
            if message.get("call", "1") == "1":
                self.seed_check = correctness.SeedCheck(spec, cls, message["which"], self.device, message["seed"],
                                                        bool(message.get("first", True)), self.before)
                with shared_device(None if self.device == "cpu" else torch.cuda.current_device()):
                    outputs = self.seed_check.first_call()
            else:
                if self.seed_check is None:
                    raise ValueError("a seed's second call came before its first")
                with shared_device(None if self.device == "cpu" else torch.cuda.current_device()):
                    outputs = self.seed_check.second_call()
            report = self.seed_check.report()
        except CandidateError as exc:
            return {"status": exc.status, "reason": str(exc)}
        except correctness.Rejected as exc:
            return {"status": "rejected", "reason": str(exc)}
        self.outputs = outputs
        return {"status": "ok", **report, "outputs": send_outputs(outputs, self.workdir)}


def _setup(log_path: str, device: str, memory_limit_mb: int | None) -> None:
    try:
        os.setpgid(0, 0)  # the worker kills the whole group on a timeout: kernels may have spawned helpers
    except OSError:
        pass
    try:
        ctypes.CDLL("libc.so.6").prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # pragma: no cover - non-glibc systems
        pass
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    if memory_limit_mb and device == "cpu":  # RLIMIT_AS breaks CUDA's address-space reservations
        limit = int(memory_limit_mb) << 20
        # soft only: a simulation raises it for the untouched pages of a published-size case (untouched.py)
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    configure_numerics()

