"""Adversarial corpus: every cheating candidate must fail evaluation, every honest one must pass.

Each file in ``candidates/`` is one candidate named ``<class>__<name>.py`` whose header comments say
what the evaluator must conclude::

    # op: swish                      built-in spec (kernelevolve/builtin_specs/<op>.py), or a path under this folder
                                     (``specs/swish_loose.py``) to evaluate against
    # expect: rejected               the result's status on the cpu target
    # reason: forward ran torch      a substring of the result's reason (omitted for ok)
    # gpu-expect: / gpu-reason:      optional: the verdict at production sizes on a GPU where it differs
                                     (``benchmarks/adversarial_gpu.py`` runs the corpus there)
    # why: ...                       what the cheat is and why it must fail
    # xfail: ...                     optional: a known evaluator gap (the test is a strict xfail);
                                     such a file may omit '# reason:' until the gap is fixed

All files go through one real sandboxed ``EvaluationWorker`` under Triton's CPU interpreter, exactly
as the search evaluates candidates on the ``cpu`` target.
"""

from __future__ import annotations

from collections import Counter

import pytest

from interpreters.sandbox import EvaluationWorker
from tests.adversarial.corpus import CASES, TIMEOUT_S, Case


def _param(case: Case):
    marks = [pytest.mark.xfail(strict=True, reason=f"evaluator gap: {case.xfail}")] if case.xfail else []
    return pytest.param(case, id=case.path.stem, marks=marks)


@pytest.fixture(scope="module")
def worker():
    w = EvaluationWorker({"TRITON_INTERPRET": "1"})
    try:
        yield w
    finally:
        w.close()


def test_corpus_composition() -> None:
    cheats = [c for c in CASES if c.cls not in ("honest", "sandbox")]
    assert len(cheats) >= 30, f"only {len(cheats)} cheating candidates"
    # a cheat that only pays when timed may pass on the cpu target (nothing is timed there), never on a GPU
    assert all(c.gpu_expect != "ok" for c in cheats), "a cheating candidate is expected to pass on a GPU"
    assert all(c.expect != "ok" or c.gpu_expect != c.expect for c in cheats)
    classes = Counter(c.cls for c in cheats)
    assert len(classes) >= 12, f"only {len(classes)} cheat classes: {sorted(classes)}"
    honest = [c for c in CASES if c.cls == "honest"]
    assert len(honest) >= 10 and all(c.expect == "ok" for c in honest), "need >= 10 honest candidates"
    timeouts = [c for c in CASES if c.expect == "timeout"]
    assert len(timeouts) <= 1, "each timeout candidate costs the full timeout; keep one"


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_candidate(case: Case, worker: EvaluationWorker) -> None:
    restarts = worker.restarts
    result = worker.evaluate({
        "spec_path": str(case.spec_path),
        "candidate_path": str(case.path),
        "device": "cpu",
        "target": "cpu",
        "timeout_s": TIMEOUT_S,
    })
    detail = f"{case.path.name} ({case.why}): got {result.status!r}: {result.reason}"
    assert worker.restarts == restarts, "a candidate killed the evaluation worker itself, not just its phase child"
    assert result.status == case.expect, detail
    assert case.reason in result.reason, detail
