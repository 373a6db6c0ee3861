"""Per-case speed of a (correct) candidate against eager and ``torch.compile`` baselines on a device.

The ``torch.compile`` baseline is what a user deploying one shape gets: a fresh static compile per case
(``dynamo.reset()``, then ``dynamic=False``). One compiled module reused across cases recompiles with
dynamic shapes from the second shape on, and its kernels are slower (measured on an H100: softmax 8192x1000
fp16 70.4 us through the shared module vs 56.8 us static), which inflated every later case's "vs compile".

Screening (docs/architecture.md §9): when the job names a fitness bar (a fraction of the run's best so far) and every
case's compile/eager ratio is already cached, a short interleaved measurement comes first. If even its
optimistic estimate (eager's 75th percentile over the candidate's 25th, per case) is below the bar, the full
timing is skipped and the node gets the pessimistic estimate (eager's 25th over the candidate's 75th), so a
screened fitness is below what the medians of a full timing would give. Winners are always re-measured in full.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from evaluators import EVALUATOR_VERSION, memory_probe
from evaluators.baselines import BaselineCache, cache_key
from evaluators.candidate import build_pair
from evaluators.comparison import compare
from evaluators.correctness import FRESH_SEED_OFFSET, flatten_outputs, make_inputs
from evaluators.device_lock import exclusive_device, shared_device
from evaluators.fresh_inputs import FreshInputs
from evaluators.gpu_state import gpu_state
from evaluators.job import FULL_TARGET_MS
from evaluators.profiling import kernel_breakdown, ncu_available, ncu_metrics
from evaluators.roofline import Peaks, analyse, compute_dtype, default_work
from evaluators.spec import OperatorSpec
from evaluators.timed_checks import output_check
from evaluators.timing import Timing, interleaved_timings

TIMING_SEED = 0
COMPILE_MODE = "static-per-case"  # recorded with every compile baseline
SCREEN_REPS = 20
STALE_EAGER = 1.5  # a cached compile/eager ratio is re-measured when eager's speed moved more than this


def static_compile(reference: torch.nn.Module, inputs: tuple, backend: str | Callable = "inductor") -> Any:
    """A compile of ``reference`` specialised to these inputs alone, whatever was compiled before."""
    torch._dynamo.reset()
    compiled = torch.compile(reference, dynamic=False, backend=backend)
    with torch.no_grad():
        compiled(*inputs)
    return compiled


def _agrees(spec: OperatorSpec, baseline: Any, reference: torch.nn.Module, inputs: tuple) -> bool:
    with torch.no_grad():
        got, want = flatten_outputs(baseline(*inputs)), flatten_outputs(reference(*inputs))
    return compare([g.contiguous() for g in got], want, spec)[0]


def _quantile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=4)[q - 1] if len(samples) >= 4 else statistics.median(samples)


class _Clock:
    """Seconds per phase of one measurement (what the node's breakdown reports), and the phase in which this
    process's device memory peaked (where an evaluation's memory goes: issue #28)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.peak_phase, self._peak = "", 0

    @contextlib.contextmanager
    def phase(self, name: str):  # noqa: ANN201 - a context manager
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - t0)
            peak = memory_probe.peak()
            if peak > self._peak:
                self.peak_phase, self._peak = name, peak

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    @contextlib.contextmanager
    def shared(self, gpu: int, phase: str | None = None):  # noqa: ANN201 - a context manager
        """Holds the device shared (its wait counted as ``shared_wait``), inside ``phase`` when named; what the
        body queued has run before the hold is let go, so none of it overlaps another slot's timing."""
        with shared_device(gpu) as waited, self.phase(phase) if phase else contextlib.nullcontext():
            self.add("shared_wait", waited)
            yield
            torch.cuda.synchronize()

    @contextlib.contextmanager
    def exclusive(self, gpu: int, phase: str):  # noqa: ANN201 - a context manager
        """Holds the device exclusively inside ``phase``; its wait is counted as ``lock_wait``."""
        with exclusive_device(gpu) as waited, self.phase(phase):
            yield
        self.add("lock_wait", waited)


def measure(spec: OperatorSpec, cand_cls: type[torch.nn.Module], candidate_path: str, device: str,
            compile_baseline: bool = True, peaks: dict[str, Any] | None = None, profile: bool = True,
            ncu: bool = False, baseline_dir: str | None = None, screen_below: float | None = None,
            target_ms: float = FULL_TARGET_MS, judged_err: dict[str, float] | None = None,
            precision: float | None = None) -> dict[str, Any]:
    """Returns {"cases": {name: {candidate_ms, ..._iqr_ms, eager_ms, compile_ms, roofline...}}, "gpu": {...},
    "phases": {...}, "screened": bool, "timed_checks": {case: outputs checked}}. With ``profile`` the first case
    (production shapes come first) is also profiled: kernels and launches per forward, and Nsight Compute
    metrics when asked for and installed.

    Every call gets freshly written inputs (the timing seed's and the fresh seed's contents, swapped in place:
    :mod:`evaluators.fresh_inputs`), eager and compile under the same rule as the candidate; a random sample of
    the candidate's timed calls is checked against the reference (:mod:`evaluators.timed_checks`), raising
    ``TimedOutputError``. ``judged_err`` is the judge's worst accepted error per case; ``precision`` lets a
    search node's timing stop once its medians are that precise (:func:`interleaved_timings`).

    Every step that puts work on the GPU holds it shared (building modules and inputs, warm-ups, baseline
    checks) and every timed loop holds it exclusively, so no other slot's work runs beside a timing (#31)."""
    target_peaks = Peaks.from_dict(peaks)
    clock, extra = _Clock(), {}
    judged_err = judged_err or {}
    checked: dict[str, int] = {}
    gpu = torch.cuda.current_device()
    with clock.shared(gpu, "setup"):  # modules here; a case's inputs when it is timed
        reference, candidate = build_pair(spec, cand_cls, TIMING_SEED, device)
        extras = spec.extra_baselines(reference) if spec.extra_baselines else {}
        names = list(make_inputs(spec, "prod", device, TIMING_SEED))
    with clock.phase("gpu_state"):
        cache, state = BaselineCache(baseline_dir), gpu_state()
    versions = {k: state.get(k, "") for k in ("torch", "triton", "driver_version")}
    versions["evaluator"], versions["compile_mode"] = EVALUATOR_VERSION, COMPILE_MODE
    keys = {name: cache_key(spec.source_hash, name, state.get("name", device), versions) for name in names}
    ratios = {name: (cache.get(key) or {}).get("compile_over_eager") for name, key in keys.items()}
    rules: dict[str, bool] = {}  # case -> whether its inputs were swapped in place

    def case_inputs(name: str) -> tuple[tuple, FreshInputs, Any]:
        """One case's inputs, its rotation of two contents and its sampled-output check: one case's inputs
        are on the device at a time (a spec's other cases are built and dropped at once)."""
        with clock.shared(gpu, "setup"):
            inputs = make_inputs(spec, "prod", device, TIMING_SEED)[name]
            rotation = FreshInputs(inputs, make_inputs(spec, "prod", device, TIMING_SEED + FRESH_SEED_OFFSET)[name])
        rules[name] = rotation.in_place
        return inputs, rotation, output_check(spec, reference, rotation.current, name, judged_err.get(name), checked)

    def work(inputs: tuple) -> tuple[float | None, float | None, str] | None:
        """(FLOPs, bytes, compute dtype) of one forward on a case's inputs, while they are alive."""
        if target_peaks is None:
            return None
        flops, nbytes = spec.flops(inputs), spec.bytes(inputs)
        if flops is None and nbytes is None:
            flops, nbytes = default_work(reference, inputs)
        return flops, nbytes, compute_dtype(inputs)

    def row_for(name: str, timings: dict[str, Timing], case_work: tuple | None) -> dict[str, Any]:
        row: dict[str, Any] = {"baselines_ms": {}}
        for label, t in timings.items():
            if label.startswith("baseline:"):
                row["baselines_ms"][label.removeprefix("baseline:")] = t.median_ms
                continue
            row[f"{label}_ms"], row[f"{label}_iqr_ms"], row[f"{label}_reps"] = t.median_ms, t.iqr_ms, t.reps
        if target_peaks is not None and case_work is not None:
            flops, nbytes, dtype = case_work
            row["roofline"] = analyse(flops, nbytes, dtype, row["candidate_ms"], target_peaks)
        return row

    if screen_below is not None and (not compile_baseline or all(ratios.values())):
        screened = _screen(candidate, reference, names, case_inputs, work, ratios, compile_baseline, screen_below,
                           clock, gpu)
        if screened is not None:
            cases = {name: row_for(name, timings, case_work) | extra_rows
                     for name, (timings, extra_rows, case_work) in screened.items()}
            del screened
            return {"cases": cases, "gpu": state, "screened": True, "phases": _rounded(clock.seconds),
                    "timed_checks": checked, "fresh_inputs": _rule(rules), "peak_phase": clock.peak_phase}

    cases: dict[str, Any] = {}
    stale, compiled = False, None
    for name in names:
        inputs, rotation, check = case_inputs(name)
        fns: dict[str, Callable[[], object]] = {
            "candidate": lambda m=candidate, r=rotation: m(*r.current()),
            "eager": lambda m=reference, r=rotation: m(*r.current()),
        }
        for label, fn in extras.items():
            with clock.shared(gpu):
                agrees = _agrees(spec, fn, reference, inputs)
            if agrees:  # a wrong baseline would make every ratio a lie
                fns[f"baseline:{label}"] = lambda f=fn, r=rotation: f(*r.current())
        need_compile = compile_baseline and ratios[name] is None
        # One slot compiles a case's baseline while the others wait for its cached ratio (no 8x Inductor work).
        with cache.claim(keys[name]) if need_compile else contextlib.nullcontext():
            if need_compile:
                ratios[name] = (cache.get(keys[name]) or {}).get("compile_over_eager")
                need_compile = ratios[name] is None
            with torch.no_grad(), clock.shared(gpu, "warmup"):
                if need_compile:  # Inductor and Triton compile on the host, outside the device lock
                    compiled = static_compile(reference, inputs)
                    fns["compile"] = lambda m=compiled, r=rotation: m(*r.current())
                for label, fn in fns.items():  # each kernel's own working memory, apart from the evaluator's
                    out, _ = memory_probe.working_set(fn, label)
                    del out
            with torch.no_grad(), clock.exclusive(gpu, "timing"):
                timings = interleaved_timings(fns, target_ms_per_fn=target_ms, fresh=rotation,
                                              checks={"candidate": check}, precision=precision)
            row = row_for(name, timings, work(inputs))
            row["compile_mode"] = COMPILE_MODE
            if need_compile:
                cache.put(keys[name], {"compile_over_eager": row["compile_ms"] / row["eager_ms"],
                                       "eager_ms": row["eager_ms"], "compile_ms": row["compile_ms"], "case": name,
                                       "device": state.get("name"), **versions})
            elif compile_baseline:
                row["compile_ms"] = row["eager_ms"] * ratios[name]
                row["compile_iqr_ms"], row["compile_from_cache"] = None, True
                cached_eager = (cache.get(keys[name]) or {}).get("eager_ms")
                if cached_eager and not 1 / STALE_EAGER < row["eager_ms"] / cached_eager < STALE_EAGER:
                    # eager ran at a very different speed when the ratio was cached (a loaded or memory-starved
                    # GPU then, say): that ratio is not this session's; measure this case's compile afresh
                    cache.drop(keys[name])
                    stale = True  # re-measured below, after the claim is left: holding it deadlocked every slot
        if profile and not stale and "profile" not in extra:
            with torch.no_grad(), exclusive_device(gpu), clock.phase("profile"):
                extra["profile"] = {"case": name, **kernel_breakdown(fns["candidate"])}
            if ncu and ncu_available():
                with clock.phase("profile"):
                    extra["ncu"] = {"case": name, **ncu_metrics(str(spec.path), candidate_path, name)}
        cases[name] = row
        rotation.close()
        del inputs, rotation, check, fns, timings  # the next case's inputs take their place
        compiled = None
        if stale:
            break
    if stale:  # nothing of this measurement stays alive under the next one
        del reference, candidate, extras
        return measure(spec, cand_cls, candidate_path, device, compile_baseline, peaks, profile, ncu,
                       baseline_dir, None, target_ms, judged_err, precision)
    return {"cases": cases, "gpu": state, "screened": False, "phases": _rounded(clock.seconds),
            "timed_checks": checked, "fresh_inputs": _rule(rules), "peak_phase": clock.peak_phase, **extra}


def _rule(in_place: dict[str, bool]) -> str:
    """How the timed calls got fresh inputs: swapped in place, or (a data-dependent case) alternated sets."""
    return "swapped in place" if all(in_place.values()) else "alternated sets"


def _screen(candidate: torch.nn.Module, reference: torch.nn.Module, names: list[str],
            case_inputs: Callable[[str], tuple[tuple, FreshInputs, Any]], work: Callable[[tuple], Any],
            ratios: dict[str, float | None], compile_baseline: bool, bar: float, clock: _Clock, gpu: int,
            ) -> dict[str, tuple[dict[str, Timing], dict[str, Any], Any]] | None:
    """Short interleaved timing of every case, one case's inputs at a time; the rows of a screened-out node
    (with each case's work, for its roofline), or None to time it in full."""
    timings: dict[str, dict[str, Timing]] = {}
    kept: dict[str, Any] = {}
    for name in names:
        inputs, rotation, check = case_inputs(name)
        fns = {"candidate": lambda m=candidate, r=rotation: m(*r.current()),
               "eager": lambda m=reference, r=rotation: m(*r.current())}
        with torch.no_grad():
            with clock.shared(gpu, "warmup"):
                for fn in fns.values():
                    fn()
            with clock.exclusive(gpu, "screening"):
                timings[name] = interleaved_timings(fns, reps=SCREEN_REPS, warmup=2, fresh=rotation,
                                                    checks={"candidate": check})
        rotation.close()
        kept[name] = work(inputs)
        del inputs, rotation, check, fns
    samples = {name: (t["candidate"].samples_ms, t["eager"].samples_ms) for name, t in timings.items()}
    optimistic, _ = screen_estimates(samples, {n: ratios[n] if compile_baseline else 1.0 for n in samples})
    if optimistic >= bar:
        return None
    rows = {}
    for name, t in timings.items():
        cand_ms, eager_ms = _quantile(t["candidate"].samples_ms, 3), _quantile(t["eager"].samples_ms, 1)
        t["candidate"].median_ms, t["eager"].median_ms = cand_ms, eager_ms  # the pessimistic pair, reported as such
        row: dict[str, Any] = {"screened": True, "screen_reps": SCREEN_REPS, "compile_mode": COMPILE_MODE}
        if compile_baseline:
            row.update(compile_ms=eager_ms * ratios[name], compile_iqr_ms=None, compile_from_cache=True)
        rows[name] = (t, row, kept[name])
    return rows


def screen_estimates(samples: dict[str, tuple[list[float], list[float]]], ratios: dict[str, float]
                     ) -> tuple[float, float]:
    """(optimistic, pessimistic) fitness from short samples: per case, ``ratio`` (compile/eager, 1 for a
    fitness vs eager) x eager's 75th percentile / the candidate's 25th, and x eager's 25th / the candidate's
    75th. The pessimistic one never exceeds the ratio of the same samples' medians."""
    optimistic, pessimistic = [], []
    for name, (cand, eager) in samples.items():
        optimistic.append(ratios[name] * _quantile(eager, 3) / _quantile(cand, 1))
        pessimistic.append(ratios[name] * _quantile(eager, 1) / _quantile(cand, 3))
    return _geomean(optimistic), _geomean(pessimistic)


def _geomean(values: list[float]) -> float:
    return statistics.geometric_mean(values) if values and all(v > 0 for v in values) else 0.0


def _rounded(seconds: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in seconds.items()}
