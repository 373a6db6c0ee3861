"""Run evaluations of candidate sources on a target, one at a time, in a sandboxed local worker."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from evaluators.identity import source_hash
from evaluators.job import DEFAULT_SEEDS, EvaluationJob
from evaluators.result import EvaluationResult
from interpreters.sandbox import EvaluationWorker
from interpreters.targets import Target


class DeviceUnavailable(Exception):
    """The target needs a device this host does not have (one-line message with a hint)."""


def worker_settings(target: Target, simulate: bool) -> tuple[dict[str, str], str]:
    """Environment and device for the worker that serves ``target``."""
    if simulate and target.interpreter == "cpu":
        raise NotImplementedError("--simulate needs a hardware target to model; 'cpu' is the interpreter itself")
    if not target.runs_on_device(simulate):
        return {"TRITON_INTERPRET": "1"}, "cpu"
    from interpreters.targets import is_present

    if not is_present(target):
        raise DeviceUnavailable(
            f"no {target.description or target.name} is reachable from this host; use --simulate, or run "
            f"'ke worker --hw {target.name}' on a host that has one"
        )
    return {}, "cuda"


def target_peaks(target: Target) -> dict:
    """The figures the evaluator's roofline needs, from the target record (plain data for the job)."""
    return {"dram_gbps": target.dram_bandwidth_gbps, "tflops": dict(target.peak_tflops),
            "launch_overhead_us": target.launch_overhead_us}


def hardware_record(target: Target) -> dict:
    """The target record as plain data for the simulator's cost model (extra TOML keys included)."""
    record = dataclasses.asdict(target)
    extra = record.pop("extra", {})
    record["device_match"] = list(target.device_match)
    return {**extra, **record}


class LocalExecutor:
    """Writes each candidate to a scratch file (Triton needs source on disk) and evaluates it."""

    def __init__(self, target: Target, scratch: Path, timeout_s: float = 120.0, simulate: bool = False,
                 memory_limit_mb: int | None = 16384, ncu: bool = False,
                 extra_env: dict[str, str] | None = None, seeds: int | None = None) -> None:
        env, self.device = worker_settings(target, simulate)
        env = {**env, **(extra_env or {})}
        self.simulated = simulate or target.always_simulated
        self.target = target
        self.scratch = scratch
        self.timeout_s = timeout_s
        self.memory_limit_mb = memory_limit_mb
        self.ncu = ncu
        self.seeds = list(range(seeds)) if seeds else list(DEFAULT_SEEDS)  # what correctness is checked on
        self._worker = EvaluationWorker(env)

    def evaluate(self, spec_path: Path, source: str, screen_below: float | None = None,
                 final: bool | None = None, seeds: int | None = None) -> EvaluationResult:
        """Evaluate one source. ``final`` None (``ke eval``) and True (a run's winners) time in full with the
        profiler; False (a search node) times at search length without it, screened against ``screen_below``.
        ``seeds``: this evaluation's number of correctness seeds (None: the executor's)."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        path = self.scratch / f"cand_{source_hash(source)[:16]}.py"
        path.write_text(source, encoding="utf-8")
        job = EvaluationJob(
            spec_path=str(spec_path), candidate_path=str(path), device=self.device, target=self.target.name,
            timeout_s=self.timeout_s, memory_limit_mb=self.memory_limit_mb, peaks=target_peaks(self.target),
            ncu=self.ncu, baseline_cache_dir=str(self.scratch.parent / "baselines"),
            cases=self.target.checked_cases(self.simulated), seeds=list(range(seeds)) if seeds else self.seeds)
        if final is False:
            job = job.search_node(screen_below)
        if self.simulated:  # checked where sizes fixed by the constructor args are the production ones
            job = dataclasses.replace(job, simulate=hardware_record(self.target))
        return self._worker.evaluate(job)

    def close(self) -> None:
        self._worker.close()
