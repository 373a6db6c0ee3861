"""Running a lowered draft through the real evaluator on Triton's CPU interpreter, with bounds for GPU-form
drafts (used by every lowering test that checks a draft is exact)."""

from __future__ import annotations

import json
from pathlib import Path

SPECS = Path(__file__).resolve().parents[1] / "specs" / "any_op"


# A GPU-form draft (NVIDIA tiles, tl.sort, associative scans) run by Triton's CPU interpreter takes minutes on
# a loaded 2-core machine: about the evaluator's default 120 s per phase, and up to a third of ``ke``'s default
# 600 s process bound (issue 30, point 19). Those runs get their own bounds, far above their usual time, so a
# verdict depends on the draft being exact, never on the machine's load. What is asserted is unchanged.
GPU_FORM_PHASE_TIMEOUT_S = 1200
GPU_FORM_PROCESS_TIMEOUT_S = 3 * GPU_FORM_PHASE_TIMEOUT_S + 600  # a check, its re-verification, start-up


# A GPU-form draft is checked on one input seed, not a search's three (``ke eval --seeds 1``): what such a test
# asks is whether the lowering's index math, masks and tiles are exact, and every seed runs the same code paths
# on other random values, at a minute of interpreter time each (issue #30: CI time). CPU-form drafts, and every
# search, keep three.
GPU_FORM_SEEDS = 1


def interpreter_eval_args(gpu_form: bool) -> tuple[tuple[str, ...], dict[str, float]]:
    """``ke eval`` arguments and ``ke`` keywords for an interpreter run of a GPU-form draft (none else): its
    bounds and its one seed."""
    if not gpu_form:
        return (), {}
    return (("--timeout", str(GPU_FORM_PHASE_TIMEOUT_S), "--seeds", str(GPU_FORM_SEEDS)),
            {"timeout": GPU_FORM_PROCESS_TIMEOUT_S})


def passes(ke, spec: Path, source: str, tmp_path: Path, name: str, gpu_form: bool = True) -> dict:
    """The real evaluator on the cpu target accepts ``source`` (its verdict is returned); ``gpu_form``: a
    draft lowered for a GPU."""
    candidate = tmp_path / f"{name}.py"
    candidate.write_text(source, encoding="utf-8")
    extra, bounds = interpreter_eval_args(gpu_form)
    result = ke("eval", "--op", str(spec), "--hw", "cpu", str(candidate), "--json", *extra,
                "--state-dir", str(tmp_path / "state"), **bounds)
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["status"] == "ok", result.stdout
    assert len(verdict["extra"]["seeds"]) == (GPU_FORM_SEEDS if gpu_form else 3)
    return verdict
