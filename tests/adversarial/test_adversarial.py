"""Adversarial corpus: every cheating candidate must fail evaluation, every honest one must pass.

Each file in ``candidates/`` is one candidate named ``<class>__<name>.py`` whose header comments say
what the evaluator must conclude::

    # op: swish                      built-in spec (kernelevolve/ops/<op>.py) to evaluate against
    # expect: rejected               the result's status
    # reason: forward ran torch      a substring of the result's reason (omitted for ok)
    # why: ...                       what the cheat is and why it must fail
    # xfail: ...                     optional: a known evaluator gap (the test is a strict xfail);
                                     such a file may omit '# reason:' until the gap is fixed

All files go through one real sandboxed ``EvaluationWorker`` under Triton's CPU interpreter, exactly
as the search evaluates candidates on the ``cpu`` target.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from interpreters.sandbox import EvaluationWorker

HERE = Path(__file__).resolve().parent
CANDIDATES = HERE / "candidates"
ROOT = HERE.parents[1]
OPS = ROOT / "kernelevolve" / "ops"
STATUSES = {"ok", "incorrect", "compile_error", "runtime_error", "timeout", "crash", "rejected"}
TIMEOUT_S = 20
_HEADER = re.compile(r"^#\s*(op|expect|reason|why|xfail)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class Case:
    path: Path
    cls: str
    op: str
    expect: str
    reason: str
    why: str
    xfail: str


def _parse(path: Path) -> Case:
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        match = _HEADER.match(line)
        if match:
            fields[match.group(1)] = match.group(2)
    cls, sep, _ = path.stem.partition("__")
    assert sep, f"{path.name}: name must be <class>__<name>.py"
    for key in ("op", "expect", "why"):
        assert fields.get(key), f"{path.name}: missing '# {key}:' header"
    assert fields["expect"] in STATUSES, f"{path.name}: unknown expect '{fields['expect']}'"
    assert (OPS / f"{fields['op']}.py").is_file(), f"{path.name}: unknown op '{fields['op']}'"
    if fields["expect"] != "ok" and not fields.get("xfail"):
        # an xfail (evaluator gap) may leave the reason open: the fix decides the message
        assert fields.get("reason"), f"{path.name}: a failing expectation needs '# reason:'"
    return Case(path, cls, fields["op"], fields["expect"], fields.get("reason", ""), fields["why"],
                fields.get("xfail", ""))


CASES = [_parse(p) for p in sorted(CANDIDATES.glob("*.py"))]


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
    assert all(c.expect != "ok" for c in cheats), "a cheating candidate is expected to pass"
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
        "spec_path": str(OPS / f"{case.op}.py"),
        "candidate_path": str(case.path),
        "device": "cpu",
        "target": "cpu",
        "timeout_s": TIMEOUT_S,
    })
    detail = f"{case.path.name} ({case.why}): got {result.status!r}: {result.reason}"
    assert worker.restarts == restarts, "a candidate killed the evaluation worker itself, not just its phase child"
    assert result.status == case.expect, detail
    assert case.reason in result.reason, detail
