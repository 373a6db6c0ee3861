"""The evaluation worker: a long-lived process that forks one child per phase of each evaluation.

It imports torch and Triton once (seconds), then ``fork``s for every phase, so each untrusted
candidate runs in a fresh address space that dies with it: a crash, ``os._exit`` or a hang kills only
that child. It never touches a device itself, so forking stays safe with CUDA.

Protocol: one JSON job per line on stdin, one JSON reply per line on the original stdout. Anything
the candidate prints goes to a per-phase log file, never into the protocol stream.
Run: ``python -m evaluators.worker``.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluators import EVALUATOR_VERSION
from evaluators.result import CaseResult, EvaluationResult, geomean
from evaluators.static_checks import check_source

_PR_SET_PDEATHSIG = 1
SUSPICIOUS_SPEEDUP = 10.0
REVERIFY_SEEDS = [1009, 2003, 3001]


def main() -> None:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    import torch  # preload before forking: the point of this process
    import torch._dynamo  # noqa: F401 - the guard's first TorchDispatchMode imports it (~3 s) in every child
    import triton  # noqa: F401

    # References and baselines run in IEEE fp32, the precision candidates are checked against: cuDNN's
    # default TF32 alone moves conv1d fp32 outputs by ~1e-3, ten times the fp32 tolerance.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if os.environ.get("TRITON_INTERPRET") == "1":
        from evaluators.guard import install_interpreter_autotune

        install_interpreter_autotune()

    protocol.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            result = evaluate(job)
        except Exception as exc:  # the harness itself failed: report it, stay alive
            result = EvaluationResult.failure("crash", f"evaluator error: {type(exc).__name__}: {exc}")
        protocol.write(json.dumps({"id": job.get("id"), "result": result.to_dict()}) + "\n")


def evaluate(job: dict[str, Any]) -> EvaluationResult:
    """Correctness (candidate child, then judge child), then timing on a device if asked."""
    started = time.monotonic()
    device, target = job.get("device", "cpu"), job.get("target", "cpu")
    which = job.get("cases", "test" if device == "cpu" else "prod")
    seeds = job.get("seeds", [0, 1, 2])
    timeout = float(job.get("timeout_s", 120))
    workdir = Path(tempfile.mkdtemp(prefix="ke-eval-"))
    base = {"target": target, "evaluator_version": EVALUATOR_VERSION}
    try:
        if job.get("static_checks", True):
            violations = check_source(Path(job["candidate_path"]).read_text(encoding="utf-8"))
            if violations:
                res = EvaluationResult.failure("rejected", str(violations[0]), **base)
                res.extra["violations"] = [str(v) for v in violations]
                return _finish(res, started)
        args = (job["spec_path"], job["candidate_path"], which, device, seeds, str(workdir))
        status, payload = run_phase("candidate", _candidate_phase, args, workdir, timeout, job)
        if status != "ok":
            return _finish(EvaluationResult.failure(status, payload["reason"], **base), started)
        if payload.get("status", "ok") != "ok":
            return _finish(EvaluationResult.failure(payload["status"], payload["reason"], **base), started)
        launches = payload.get("launches_per_forward")
        judge_args = (job["spec_path"], which, device, seeds, str(workdir))
        status, verdict = run_phase("judge", _judge_phase, judge_args, workdir, max(timeout, 300.0), job)
        if status != "ok":
            return _finish(EvaluationResult.failure(status, "reference check: " + verdict["reason"], **base), started)
        cases = [CaseResult(**c) for c in verdict["cases"]]
        # a KernelBench file checked on shrunk copies of its production inputs says so (shrink.py)
        shrunk = {"shrunk": verdict["shrunk"]} if verdict.get("shrunk") else {}
        bad = [c for c in cases if c.status != "ok"]
        if bad:
            res = EvaluationResult.failure("incorrect", f"case {bad[0].name}: {bad[0].error}", cases=cases, **base)
            res.launches_per_forward = launches
            res.extra.update(shrunk)
            return _finish(res, started)
        result = EvaluationResult(status="ok", fitness=1.0, cases=cases, launches_per_forward=launches, **base)
        result.extra.update(shrunk)
        if job.get("simulate"):
            sim_args = (job["spec_path"], job["candidate_path"], job["simulate"])
            status, sim = run_phase("simulate", _simulate_phase, sim_args, workdir, max(timeout, 300.0), job)
            if status != "ok":
                return _finish(EvaluationResult.failure(status, "simulation: " + sim["reason"], **base), started)
            _apply_simulation(result, sim, job.get("peaks"))
            if (result.speedup_vs_eager or 0) > SUSPICIOUS_SPEEDUP:
                refuted = _reverify(job, which, device, timeout, workdir, base)
                if refuted is not None:
                    return _finish(refuted, started)
                result.extra["reverified_seeds"] = REVERIFY_SEEDS
        elif device != "cpu" and job.get("time", True):
            perf_args = (job["spec_path"], job["candidate_path"], device, bool(job.get("compile_baseline", True)),
                         job.get("peaks"), bool(job.get("profile", True)), bool(job.get("ncu", False)),
                         job.get("baseline_cache_dir"))
            status, perf = run_phase("timing", _timing_phase, perf_args, workdir, max(timeout, 600.0), job)
            if status != "ok":
                return _finish(EvaluationResult.failure(status, "timing: " + perf["reason"], **base), started)
            _apply_timings(result, perf)
            if max(result.speedup_vs_eager or 0, result.speedup_vs_compile or 0) > SUSPICIOUS_SPEEDUP:
                refuted = _reverify(job, which, device, timeout, workdir, base)
                if refuted is not None:
                    return _finish(refuted, started)
                result.extra["reverified_seeds"] = REVERIFY_SEEDS
        return _finish(result, started)

    finally:
        if not job.get("keep_workdir"):
            shutil.rmtree(workdir, ignore_errors=True)


def _reverify(job: dict[str, Any], which: str, device: str, timeout: float, workdir: Path,
              base: dict[str, Any]) -> EvaluationResult | None:
    """A speedup above 10x is believed only after correctness holds again on fresh seeds (DESIGN §4)."""
    args = (job["spec_path"], job["candidate_path"], which, device, REVERIFY_SEEDS, str(workdir))
    status, payload = run_phase("reverify", _candidate_phase, args, workdir, timeout, job)
    if status == "ok" and payload.get("status", "ok") == "ok":
        judge_args = (job["spec_path"], which, device, REVERIFY_SEEDS, str(workdir))
        status, verdict = run_phase("rejudge", _judge_phase, judge_args, workdir, max(timeout, 300.0), job)
        if status == "ok" and all(c["status"] == "ok" for c in verdict["cases"]):
            return None
        reason = next((c["error"] for c in verdict.get("cases", []) if c["status"] != "ok"), verdict.get("reason"))
    else:
        reason = payload.get("reason", status)
    return EvaluationResult.failure("incorrect", f"speedup above {SUSPICIOUS_SPEEDUP:g}x failed re-verification "
                                    f"on fresh seeds: {reason}", **base)


def _apply_timings(result: EvaluationResult, perf: dict[str, Any]) -> None:
    by_name = {c.name: c for c in result.cases}
    vs_eager, vs_compile = [], []
    for name, row in perf["cases"].items():
        case = by_name.setdefault(name, CaseResult(name=name))
        case.latency_ms, case.latency_iqr_ms = row["candidate_ms"], row["candidate_iqr_ms"]
        case.eager_ms, case.compile_ms = row.get("eager_ms"), row.get("compile_ms")
        case.baselines_ms = dict(row.get("baselines_ms") or {})
        roof = row.get("roofline") or {}
        case.floor_ms, case.fraction_of_floor = roof.get("floor_ms"), roof.get("fraction_of_floor")
        case.bottleneck = roof.get("bottleneck")
        vs_eager.append(case.eager_ms / case.latency_ms)
        if case.compile_ms:
            vs_compile.append(case.compile_ms / case.latency_ms)
    result.cases = list(by_name.values())
    result.timed = True
    result.speedup_vs_eager = geomean(vs_eager)
    result.speedup_vs_compile = geomean(vs_compile) if vs_compile else None
    result.fitness = result.speedup_vs_compile or result.speedup_vs_eager or 0.0
    result.extra["gpu"] = perf.get("gpu", {})
    for key in ("profile", "ncu", "lock_wait_s"):
        if key in perf:
            result.extra[key] = perf[key]
    first = result.cases[0] if result.cases else None  # production shapes come first in a spec
    if first is not None:
        result.roofline_fraction, result.bottleneck = first.fraction_of_floor, first.bottleneck


def _apply_simulation(result: EvaluationResult, sim: dict[str, Any], peaks: dict | None) -> None:
    from evaluators.roofline import Peaks, analyse

    by_name = {c.name: c for c in result.cases}
    ratios = []
    for name, row in sim["cases"].items():
        case = by_name.setdefault(name, CaseResult(name=name))
        case.latency_ms, case.eager_ms = row["candidate_ms"], row["eager_ms"]
        ratios.append(case.eager_ms / case.latency_ms)
        target_peaks = Peaks.from_dict(peaks)
        if target_peaks is not None:
            dram = sum(lc["dram_read_bytes"] + lc["dram_write_bytes"] for lc in row["launches"])
            roof = analyse(None, dram, "fp32", case.latency_ms, target_peaks)
            case.floor_ms, case.fraction_of_floor = roof["floor_ms"], roof["fraction_of_floor"]
        limits = [lc["limit"] for lc in row["launches"]]
        case.bottleneck = max(set(limits), key=limits.count) if limits else None
    result.cases = list(by_name.values())
    result.simulated, result.timed = True, False
    result.speedup_vs_eager = geomean(ratios)
    result.fitness = result.speedup_vs_eager or 0.0
    result.extra["simulation"] = sim
    first = result.cases[0] if result.cases else None
    if first is not None:
        result.roofline_fraction, result.bottleneck = first.fraction_of_floor, first.bottleneck


def _finish(result: EvaluationResult, started: float) -> EvaluationResult:
    result.eval_seconds = round(time.monotonic() - started, 3)
    return result


# --- phases: each runs in a forked child and returns a JSON-able dict ---------------------------------


def _candidate_phase(spec_path: str, cand_path: str, which: str, device: str, seeds: list[int], workdir: str) -> dict:
    import torch

    from evaluators.candidate import CandidateError
    from evaluators.correctness import Rejected, run_candidate
    from evaluators.spec import load_spec

    spec = load_spec(spec_path)
    try:
        report, outputs = run_candidate(spec, cand_path, which, device, seeds)
    except CandidateError as exc:
        return {"status": exc.status, "reason": str(exc)}
    except Rejected as exc:
        return {"status": "rejected", "reason": str(exc)}
    torch.save(outputs, Path(workdir) / "candidate_outputs.pt")
    return {"status": "ok", **report}


def _judge_phase(spec_path: str, which: str, device: str, seeds: list[int], workdir: str) -> dict:
    import dataclasses

    import torch

    from evaluators.correctness import judge
    from evaluators.spec import load_spec

    outputs = torch.load(Path(workdir) / "candidate_outputs.pt", weights_only=True)
    spec = load_spec(spec_path)
    cases = judge(spec, which, device, seeds, outputs)
    return {"cases": [dataclasses.asdict(c) for c in cases], "shrunk": spec.shrunk if which == "test" else {}}


def _simulate_phase(spec_path: str, cand_path: str, hardware: dict) -> dict:
    from evaluators.simulation import simulate
    from evaluators.spec import load_spec

    return simulate(load_spec(spec_path), cand_path, hardware)


def _timing_phase(spec_path: str, cand_path: str, device: str, compile_baseline: bool,
                  peaks: dict | None, profile: bool, ncu: bool, baseline_dir: str | None) -> dict:
    from evaluators.performance import measure
    from evaluators.spec import load_spec

    return measure(load_spec(spec_path), cand_path, device, compile_baseline, peaks, profile, ncu, baseline_dir)


# --- forking ------------------------------------------------------------------------------------------


def run_phase(
    name: str, fn: Callable[..., dict], args: tuple, workdir: Path, timeout: float, job: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Run ``fn(*args)`` in a forked child; returns ("ok", payload) or (status, {"reason": ...})."""
    out_path, log_path = workdir / f"{name}.json", workdir / f"{name}.log"
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        _child_setup(log_path, job)
        code = 0
        try:
            payload = fn(*args)
            out_path.write_text(json.dumps(payload))
        except SystemExit as exc:
            print(f"candidate raised SystemExit({exc.code})", file=sys.stderr)
            code = 3
        except BaseException as exc:  # noqa: BLE001 - report every failure of untrusted code
            out_path.write_text(json.dumps({"__error__": f"{type(exc).__name__}: {exc}",
                                            "trace": traceback.format_exc()[-4000:]}))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    status, detail = _wait(pid, timeout)
    if status == "timeout":
        return "timeout", {"reason": f"{name} phase exceeded the {timeout:g} s timeout"}
    if not out_path.exists():
        tail = _tail(log_path)
        suffix = f"; last output: {tail}" if tail else ""
        return "crash", {"reason": f"{name} process {detail} without a result{suffix}"}
    payload = json.loads(out_path.read_text())
    if "__error__" in payload:
        return "runtime_error", {"reason": payload["__error__"]}
    return "ok", payload


def _child_setup(log_path: Path, job: dict[str, Any]) -> None:
    os.setpgid(0, 0)
    try:
        ctypes.CDLL("libc.so.6").prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # pragma: no cover - non-glibc systems
        pass
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    limit_mb = job.get("memory_limit_mb")
    if limit_mb and job.get("device", "cpu") == "cpu":  # RLIMIT_AS breaks CUDA's address-space reservations
        limit = int(limit_mb) << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _wait(pid: int, timeout: float) -> tuple[str, str]:
    deadline = time.monotonic() + timeout
    delay = 0.002
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                return "exited", f"was killed by {signal.Signals(sig).name}"
            return "exited", f"exited with code {os.WEXITSTATUS(status)}"
        if time.monotonic() > deadline:
            for target in (-pid, pid):  # its process group first: kernels may have spawned helpers
                try:
                    os.kill(target, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.waitpid(pid, 0)
            return "timeout", ""
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _tail(path: Path, chars: int = 300) -> str:
    try:
        return " ".join(path.read_text(errors="replace")[-chars:].split())
    except OSError:
        return ""


if __name__ == "__main__":
    main()
