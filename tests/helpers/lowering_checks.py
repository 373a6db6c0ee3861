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


def interpreter_eval_args(gpu_form: bool) -> tuple[tuple[str, ...], dict[str, float]]:
    """``ke eval`` arguments and ``ke`` keywords bounding an interpreter run of a GPU-form draft (none else)."""
    if not gpu_form:
        return (), {}
    return ("--timeout", str(GPU_FORM_PHASE_TIMEOUT_S)), {"timeout": GPU_FORM_PROCESS_TIMEOUT_S}


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
    return verdict
