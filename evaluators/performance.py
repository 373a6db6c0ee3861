"""Per-case speed of a (correct) candidate against eager and ``torch.compile`` baselines on a device."""

from __future__ import annotations

from typing import Any

import torch

from evaluators.candidate import build_pair, load_candidate_class
from evaluators.correctness import make_inputs
from evaluators.profiling import kernel_breakdown, ncu_available, ncu_metrics
from evaluators.roofline import Peaks, analyse, compute_dtype
from evaluators.spec import OperatorSpec
from evaluators.timing import gpu_state, interleaved_timings

TIMING_SEED = 0


def measure(spec: OperatorSpec, candidate_path: str, device: str, compile_baseline: bool = True,
            peaks: dict[str, Any] | None = None, profile: bool = True, ncu: bool = False) -> dict[str, Any]:
    """Returns {"cases": {name: {candidate_ms, ..._iqr_ms, eager_ms, compile_ms, roofline...}}, "gpu": {...}}.

    The first case (production shapes come first in a spec) is also profiled: kernels and launches per
    forward from the torch profiler, and Nsight Compute metrics when asked for and installed.
    """
    target_peaks = Peaks.from_dict(peaks)
    extra: dict[str, Any] = {}
    cls = load_candidate_class(candidate_path)
    reference, candidate = build_pair(spec, cls, TIMING_SEED, device)
    compiled = torch.compile(reference) if compile_baseline else None
    cases: dict[str, Any] = {}
    for name, inputs in make_inputs(spec, "prod", device, TIMING_SEED).items():
        fns = {
            "candidate": lambda m=candidate, a=inputs: m(*a),
            "eager": lambda m=reference, a=inputs: m(*a),
        }
        if compiled is not None:
            fns["compile"] = lambda m=compiled, a=inputs: m(*a)
        with torch.no_grad():
            timings = interleaved_timings(fns)
        row: dict[str, Any] = {}
        for key, t in timings.items():
            row[f"{key}_ms"], row[f"{key}_iqr_ms"], row[f"{key}_reps"] = t.median_ms, t.iqr_ms, t.reps
        if target_peaks is not None:
            row["roofline"] = analyse(spec.flops(inputs), spec.bytes(inputs), compute_dtype(inputs),
                                      row["candidate_ms"], target_peaks)
        if profile and not extra:
            with torch.no_grad():
                extra["profile"] = {"case": name, **kernel_breakdown(fns["candidate"])}
            if ncu and ncu_available():
                extra["ncu"] = {"case": name, **ncu_metrics(str(spec.path), candidate_path, name)}
        cases[name] = row
    return {"cases": cases, "gpu": gpu_state(), **extra}
