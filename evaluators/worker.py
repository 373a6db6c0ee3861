"""The evaluation worker: a long-lived process per evaluation slot that judges, and that starts one fresh
candidate process per evaluation (:mod:`evaluators.candidate_runner`).

It imports torch and Triton once, holds one device context for its whole life, and keeps reference outputs
per (spec, seed, case) (:mod:`evaluators.judging`); untrusted code never runs in it. The candidate process
checks, and if asked simulates or times, the candidate; its outputs reach the judge over CUDA IPC (on the
CPU interpreter, a file) as JSON descriptors, so nothing it writes is unpickled here.

Protocol: one JSON job per line on stdin, one JSON reply per line on the original stdout.
Run: ``python -m evaluators.worker``.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from evaluators import EVALUATOR_VERSION
from evaluators.candidate_runner import SpareRunner, discard
from evaluators.job import EvaluationJob
from evaluators.physics import floor_verdict, withheld_reason
from evaluators.result import CaseResult, EvaluationResult, geomean
from evaluators.slot_judge import SlotJudge
from evaluators.static_checks import check_source

SUSPICIOUS_SPEEDUP = 10.0
SERVER_EXIT_GRACE_S = 5.0  # how long a killed fork server may take to turn zombie (a loaded 2-core host)
_SPARE = SpareRunner()  # this worker's next candidate process, started while the current one runs
atexit.register(_SPARE.close)
REVERIFY_SEEDS = [1009, 2003, 3001]


def main() -> None:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    from multiprocessing import forkserver

    from evaluators.candidate_runner import fork_server

    fork_server()
    forkserver.ensure_running()  # started (and preloading) before this process touches a device
    # torch is imported on the first judgement, not here: on a small host the fork server's preload is what
    # the first candidate waits for, and a second import at the same time would only slow it down
    judge = SlotJudge()
    judge.notify = lambda job_id, waited: protocol.write(json.dumps({"id": job_id, "waiting_s": round(waited, 1)})
                                                         + "\n")
    # one line per judged call: the host's backstop deadline (interpreters/sandbox.py) restarts on every line,
    # so a job of six slow but in-time calls is not taken for a hung worker
    judge.progress = lambda job_id, step: protocol.write(json.dumps({"id": job_id, "progress": step}) + "\n")
    protocol.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            result = evaluate(EvaluationJob.from_dict(job), judge)
        except Exception as exc:  # the harness itself failed: report it, stay alive
            result = EvaluationResult.failure("crash", f"evaluator error: {type(exc).__name__}: {exc}")
        # exit code 255 is what a candidate process reads when its server died holding its real status; the
        # server may then still be between closing its files and becoming a zombie, so it gets time to finish
        grace = SERVER_EXIT_GRACE_S if "exited with code 255" in result.reason else 0.0
        if result.status in ("crash", "timeout", "runtime_error") and not fork_server_alive(judge.server_pid, grace):
            # its candidate processes died with it: not the candidate's verdict (the pool restarts this worker)
            result = EvaluationResult.failure("crash", "evaluator error: the fork server that starts candidate "
                                                       f"processes died ({result.reason[:120]})")
        protocol.write(json.dumps({"id": job.get("id"), "result": result.to_dict()}) + "\n")
        if judge.fatal:  # a device fault while reading a candidate's memory: this context is unusable
            sys.exit(1)


def fork_server_pid() -> int | None:
    from multiprocessing import forkserver

    return getattr(forkserver._forkserver, "_forkserver_pid", None)


def fork_server_alive(pid: int | None, grace_s: float = 0.0) -> bool:
    """Whether the fork server ``pid`` (the one the last candidate process came from) still runs: a zombie, a
    missing process or a replaced one is dead. Read from /proc, not waited on: reaping it here would break
    multiprocessing's own restart of it. A killed process closes its files (its children's status pipes)
    before it turns zombie, and on a loaded host that takes a while: ``grace_s`` waits that long for it to."""
    if pid is None:
        return True
    deadline = time.monotonic() + grace_s
    while True:
        if pid != fork_server_pid():
            return False
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return not Path("/proc").is_dir()  # no /proc (not Linux): cannot tell, assume alive
        if state in ("Z", "X"):
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)


def evaluate(job: EvaluationJob | dict[str, Any], judge: SlotJudge) -> EvaluationResult:
    """Admission to the device's memory (:mod:`evaluators.admission`), then the evaluation itself. A node that
    cannot fit even alone ends as ``too_large``: the device's verdict, not the kernel's."""
    from evaluators.admission import PEAK_RATIO, TooLarge, estimated_peak

    job = EvaluationJob.coerce(job)
    device, which = job.device, job.which
    ledger = judge.ledger(device)
    if ledger is None:
        return _evaluate(job, judge)
    case = judge.case_bytes(job.spec_path, which)
    need = judge.reservation(job.spec_path, which)
    notify = judge.notify or (lambda waited: None)
    try:
        with ledger.reserve(judge.holder, need, on_wait=lambda waited: notify(job.id, waited)) as waited:
            result = _evaluate(job, judge)
    except TooLarge as exc:
        basis = f"{PEAK_RATIO:g}x its case's {case / 2**30:.2f} GiB plus 1 GiB" if case else "its minimum"
        if need > estimated_peak(case or 0):
            basis = "what an earlier evaluation of it used, and a tenth more"
        return EvaluationResult.failure("too_large", f"not run: {exc}; an evaluation of this problem needs {basis}",
                                        target=job.target, evaluator_version=EVALUATOR_VERSION)
    result.extra["admission"] = {"reserved_bytes": need, "case_bytes": case, "waited_s": round(waited, 3)}
    judge.learned(job.spec_path, which, device)
    return result


def _evaluate(job: EvaluationJob, judge: SlotJudge) -> EvaluationResult:
    """Static checks; then in one candidate process: correctness (judged here), simulation or timing."""
    started, wall_start = time.monotonic(), time.time()
    device, target, which, seeds, timeout = job.device, job.target, job.which, job.seeds, float(job.timeout_s)
    base = {"target": target, "evaluator_version": EVALUATOR_VERSION}
    phases: dict[str, float] = {}

    judge.begin(device)

    def finish(result: EvaluationResult) -> EvaluationResult:
        result.eval_seconds = round(time.monotonic() - started, 3)
        if device != "cpu" and any(judge.memory.values()):
            result.extra["device_memory"] = dict(judge.memory)
        result.extra.update(phases={k: round(v, 3) for k, v in phases.items()}, started_at=round(wall_start, 3),
                            ended_at=round(time.time(), 3), seeds=list(seeds))
        return result

    runner = None
    try:
        t0 = time.monotonic()
        if job.static_checks:
            violations = check_source(Path(job.candidate_path).read_text(encoding="utf-8"))
            if violations:
                res = EvaluationResult.failure("rejected", str(violations[0]), **base)
                res.extra["violations"] = [str(v) for v in violations]
                return finish(res)
        phases["static"] = time.monotonic() - t0
        runner = _SPARE.take(device, job.memory_limit_mb)
        # the server this process came from, which may be older than the current one: a spare forked before its
        # server was killed dies later, with exit code 255, while a new server already runs (issue #28)
        judge.server_pid = runner.server_pid
        phases["start"] = runner.start_s  # the wait for a process started ahead (candidate_runner.SpareRunner)
        phases["spawn_ahead"] = runner.spawn_s  # its own start-up, mostly overlapped with the last evaluation
        workdir = runner.workdir
        paths = {"spec_path": job.spec_path, "candidate_path": job.candidate_path}
        failure, cases, launches = _check(runner, judge, job, paths, which, device, seeds, timeout, workdir, phases)
        # a KernelBench file checked on shrunk copies of its production inputs says so (shrink.py)
        shrunk = judge.spec(job.spec_path).shrunk_for(which)
        if failure is not None:
            if shrunk:
                failure.extra["shrunk"] = shrunk
            failure.launches_per_forward = launches
            return finish(failure)
        result = EvaluationResult(status="ok", fitness=1.0, cases=cases, launches_per_forward=launches, **base)
        if shrunk:
            result.extra["shrunk"] = shrunk
        if job.simulate:
            t0 = time.monotonic()
            status, reply = runner.request({"cmd": "simulate", **paths, "hardware": job.simulate},
                                           max(timeout, 300.0), "simulate")
            phases["simulate"] = time.monotonic() - t0
            if status != "ok":
                return finish(EvaluationResult.failure(status, "simulation: " + reply["reason"], **base))
            _apply_simulation(result, reply["simulation"], job.peaks)
            speedup = result.speedup_vs_eager or 0
        elif device != "cpu" and job.time:
            options = job.timing_options({c.name: c.max_abs_err for c in cases if c.max_abs_err is not None})
            status, reply = runner.request({"cmd": "time", **paths, "options": options}, max(timeout, 600.0),
                                           "timing")
            if status == "ok" and reply.get("status", "ok") != "ok":  # a sampled timed output failed its check
                status = reply["status"]
            if status != "ok":
                return finish(EvaluationResult.failure(status, "timing: " + reply["reason"], **base))
            judge.note_candidate(reply, f"candidate, timing ({reply['perf'].get('peak_phase') or '?'})")
            _apply_timings(result, reply["perf"])
            for key, seconds in reply["perf"].get("phases", {}).items():
                phases[key] = phases.get(key, 0.0) + seconds
            speedup = max(result.speedup_vs_eager or 0, result.speedup_vs_compile or 0)
        else:
            return finish(result)
        # believed only after correctness holds on fresh seeds (docs/architecture.md §6)
        if speedup > SUSPICIOUS_SPEEDUP:
            failure, _, _ = _check(runner, judge, job, paths, which, device, REVERIFY_SEEDS, timeout, workdir, phases,
                                   "reverify")
            if failure is not None:
                return finish(EvaluationResult.failure(
                    "incorrect", f"speedup above {SUSPICIOUS_SPEEDUP:g}x failed re-verification on fresh seeds: "
                    f"{failure.reason}", **base))
            result.extra["reverified_seeds"] = REVERIFY_SEEDS
        return finish(result)
    finally:
        if runner is not None and job.keep_workdir:
            runner.close()
        elif runner is not None:
            discard(runner)  # the process and its work folder


def _check(runner: Any, judge: SlotJudge, job: EvaluationJob, paths: dict[str, str], which: str, device: str,
           seeds: list[int], timeout: float, workdir: Path, phases: dict[str, float], label: str = "candidate",
           ) -> tuple[EvaluationResult | None, list[CaseResult], float | None]:
    """Run the candidate on ``seeds`` and judge it: (failure or None, cases, launches per forward).

    One call of one seed at a time, judged before the next runs: the candidate process drops a call's outputs
    when it is asked for the next, so the device holds one call's outputs, not every seed's (issue #28)."""
    from evaluators.correctness import CALLS

    base = {"target": job.target, "evaluator_version": EVALUATOR_VERSION}
    prefix = "" if label == "candidate" else label + "_"
    launches: list[float] = []
    verdicts: dict[str, CaseResult] = {}
    for i, seed, index, call in [(i, s, n, c) for i, s in enumerate(seeds) for n, c in enumerate(CALLS)]:
        message = {"cmd": "check", **paths, "which": which, "seed": seed, "first": i == 0, "call": call}
        status, reply = runner.request(message, timeout, label)
        if status != "ok":
            return EvaluationResult.failure(status, reply["reason"], **base), [], _mean(launches)
        if reply.get("status", "ok") != "ok":
            return EvaluationResult.failure(reply["status"], reply["reason"], **base), [], _mean(launches)
        launches.append(float(reply.get("launches_per_forward") or 0.0))
        judge.note_candidate(reply, f"candidate, seed {seed} call {call}")
        phases[prefix + "compile"] = phases.get(prefix + "compile", 0.0) + float(reply.get("compile_s", 0.0))
        phases[prefix + "candidate"] = phases.get(prefix + "candidate", 0.0) + float(reply.get("run_s", 0.0))
        t0 = time.monotonic()
        status, verdict = judge(job, which, device, [seed], reply["outputs"], workdir, (index,))
        phases[prefix + "judge"] = phases.get(prefix + "judge", 0.0) + time.monotonic() - t0
        if judge.progress:
            judge.progress(job.id, f"{label} seed {seed} call {call}")
        if status != "ok":
            return EvaluationResult.failure(status, "reference check: " + verdict, **base), [], _mean(launches)
        for case in verdict:
            merged = verdicts.setdefault(case.name, case)
            if merged is not case:
                merged.max_abs_err = max(merged.max_abs_err or 0.0, case.max_abs_err or 0.0)
                if case.status != "ok" and merged.status == "ok":
                    merged.status, merged.error = case.status, case.error
        bad = [c for c in verdicts.values() if c.status != "ok"]
        if bad:
            cases = list(verdicts.values())
            return (EvaluationResult.failure("incorrect", f"case {bad[0].name}: {bad[0].error}", cases=cases, **base),
                    cases, _mean(launches))
    return None, list(verdicts.values()), _mean(launches)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _apply_timings(result: EvaluationResult, perf: dict[str, Any]) -> None:
    by_name = {c.name: c for c in result.cases}
    vs_eager, vs_compile = [], []
    above: list[dict[str, Any]] = []  # cases measured above 1.0 of their stated floor (physics.py)
    withheld = ""
    for name, row in perf["cases"].items():
        case = by_name.setdefault(name, CaseResult(name=name))
        case.latency_ms, case.latency_iqr_ms = row["candidate_ms"], row["candidate_iqr_ms"]
        case.eager_ms, case.compile_ms = row.get("eager_ms"), row.get("compile_ms")
        case.baselines_ms = dict(row.get("baselines_ms") or {})
        roof, case.floor_flag = floor_verdict(row.get("roofline") or {}, case.latency_ms)
        case.floor_ms, case.fraction_of_floor = roof.get("floor_ms"), roof.get("fraction_of_floor")
        case.bottleneck = roof.get("bottleneck")
        if case.floor_flag:
            above.append({"case": name, "flag": case.floor_flag, "raw_fraction": roof["raw_fraction_of_floor"]})
        if case.floor_flag == "faster_than_bytes" and not withheld:
            withheld = withheld_reason(name, roof, case.latency_ms)
        vs_eager.append(case.eager_ms / case.latency_ms)
        if case.compile_ms:
            vs_compile.append(case.compile_ms / case.latency_ms)
    result.cases = list(by_name.values())
    result.timed = True
    result.speedup_vs_eager = geomean(vs_eager)
    result.speedup_vs_compile = geomean(vs_compile) if vs_compile else None
    result.fitness = result.speedup_vs_compile or result.speedup_vs_eager or 0.0
    if above:
        result.extra["above_floor"] = above
    if withheld:  # correct, but faster than physics allows: no reward until explained
        result.fitness, result.reason = 0.0, withheld
        result.extra["fitness_withheld"] = withheld
    result.extra["gpu"] = perf.get("gpu", {})
    for key in ("profile", "ncu"):
        if key in perf:
            result.extra[key] = perf[key]
    if perf.get("screened"):
        result.extra["screened"] = True
    if "timed_checks" in perf:  # how many sampled timed outputs were checked, per case, and the input rule
        result.extra["timed_checks"] = perf["timed_checks"]
        result.extra["fresh_inputs"] = perf.get("fresh_inputs")
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


if __name__ == "__main__":
    main()
