"""Per-case speed of a (correct) candidate against eager and ``torch.compile`` baselines on a device."""

from __future__ import annotations

from typing import Any

import torch

from evaluators.baselines import BaselineCache, cache_key
from evaluators.candidate import build_pair, load_candidate_class
from evaluators.correctness import compare, flatten_outputs, make_inputs
from evaluators.device_lock import exclusive_device
from evaluators.profiling import kernel_breakdown, ncu_available, ncu_metrics
from evaluators.roofline import Peaks, analyse, compute_dtype
from evaluators.spec import OperatorSpec
from evaluators.timing import gpu_state, interleaved_timings

TIMING_SEED = 0


def _agrees(spec: OperatorSpec, baseline: Any, reference: torch.nn.Module, inputs: tuple) -> bool:
    with torch.no_grad():
        got, want = flatten_outputs(baseline(*inputs)), flatten_outputs(reference(*inputs))
    return compare([g.contiguous() for g in got], want, spec)[0]


def measure(spec: OperatorSpec, candidate_path: str, device: str, compile_baseline: bool = True,
            peaks: dict[str, Any] | None = None, profile: bool = True, ncu: bool = False,
            baseline_dir: str | None = None) -> dict[str, Any]:
    """Returns {"cases": {name: {candidate_ms, ..._iqr_ms, eager_ms, compile_ms, roofline...}}, "gpu": {...}}.

    The first case (production shapes come first in a spec) is also profiled: kernels and launches per
    forward from the torch profiler, and Nsight Compute metrics when asked for and installed.
    """
    target_peaks = Peaks.from_dict(peaks)
    extra: dict[str, Any] = {}
    cls = load_candidate_class(candidate_path)
    reference, candidate = build_pair(spec, cls, TIMING_SEED, device)
    compiled = None
    extras = spec.extra_baselines(reference) if spec.extra_baselines else {}
    cache, state = BaselineCache(baseline_dir), gpu_state()
    versions = {k: state.get(k, "") for k in ("torch", "triton", "driver_version")}
    cases: dict[str, Any] = {}
    for name, inputs in make_inputs(spec, "prod", device, TIMING_SEED).items():
        key = cache_key(spec.source_hash, name, state.get("name", device), versions)
        cached = cache.get(key) if compile_baseline else None
        fns = {
            "candidate": lambda m=candidate, a=inputs: m(*a),
            "eager": lambda m=reference, a=inputs: m(*a),
        }
        for label, fn in extras.items():
            if _agrees(spec, fn, reference, inputs):  # a wrong baseline would make every ratio a lie
                fns[f"baseline:{label}"] = lambda f=fn, a=inputs: f(*a)
        if compile_baseline and cached is None:
            if compiled is None:  # not `compiled or ...`: truth-testing a compiled module calls its __len__
                compiled = torch.compile(reference)
            fns["compile"] = lambda m=compiled, a=inputs: m(*a)
        with torch.no_grad():
            for fn in fns.values():  # compile (Inductor, Triton JIT) outside the lock: CPU work overlaps
                fn()
            torch.cuda.synchronize()
            with exclusive_device(torch.cuda.current_device()) as waited:
                timings = interleaved_timings(fns)
        extra["lock_wait_s"] = round(extra.get("lock_wait_s", 0.0) + waited, 3)
        row: dict[str, Any] = {"baselines_ms": {}}
        for label, t in timings.items():
            if label.startswith("baseline:"):
                row["baselines_ms"][label.removeprefix("baseline:")] = t.median_ms
                continue
            row[f"{label}_ms"], row[f"{label}_iqr_ms"], row[f"{label}_reps"] = t.median_ms, t.iqr_ms, t.reps
        if cached is not None:
            row["compile_ms"] = row["eager_ms"] * cached["compile_over_eager"]
            row["compile_iqr_ms"], row["compile_from_cache"] = None, True
        elif compile_baseline:
            cache.put(key, {"compile_over_eager": row["compile_ms"] / row["eager_ms"], "eager_ms": row["eager_ms"],
                            "compile_ms": row["compile_ms"], "case": name, "device": state.get("name"), **versions})
        if target_peaks is not None:
            row["roofline"] = analyse(spec.flops(inputs), spec.bytes(inputs), compute_dtype(inputs),
                                      row["candidate_ms"], target_peaks)
        if profile and "profile" not in extra:
            with torch.no_grad(), exclusive_device(torch.cuda.current_device()):
                extra["profile"] = {"case": name, **kernel_breakdown(fns["candidate"])}
            if ncu and ncu_available():
                extra["ncu"] = {"case": name, **ncu_metrics(str(spec.path), candidate_path, name)}
        cases[name] = row
    return {"cases": cases, "gpu": state, **extra}
