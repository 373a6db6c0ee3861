"""A node that failed because slots shared the host (device memory, a candidate process that never started)
is retried; a failure that is the candidate's own is never retried, and a real memory hog keeps its verdict."""

from __future__ import annotations

import pytest

from evaluators.result import EvaluationResult
from interpreters import pools
from interpreters.pools import EvaluationRequest, SlotPool
from interpreters.spec_shelf import SpecRef

OOM = ("reference check: judging ran out of device memory: CUDA out of memory. Tried to allocate 512.00 MiB. "
       "GPU 0 has a total capacity of 79.18 GiB of which 1.2 MiB is free.")
START = "start process exited with code 1 without a result; last output: CUDA error: initialization error"


class ScriptedSlot:
    """Answers with the next scripted (status, reason), then "ok" forever."""

    def __init__(self, script: list[tuple[str, str]], calls: list[str]) -> None:
        self.script, self.calls = script, calls

    def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        self.calls.append(request.source)
        if self.script:
            return EvaluationResult.failure(*self.script.pop(0))
        return EvaluationResult(status="ok", fitness=1.0)

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch) -> None:
    monkeypatch.setattr(pools, "PRESSURE_BACKOFF_S", (0.0, 0.0))


def _run(script: list[tuple[str, str]], shared: bool, retries: int = 3) -> tuple[EvaluationResult, list[str]]:
    calls: list[str] = []
    pool = SlotPool(lambda: ScriptedSlot(script, calls), 1, retries=retries, shared_device=shared)
    try:
        return pool.submit(EvaluationRequest("h100", False, SpecRef("softmax.py", ""), "src")).result(), calls
    finally:
        pool.close()


def test_device_memory_on_a_shared_gpu_is_retried_and_said() -> None:
    result, calls = _run([("crash", OOM), ("runtime_error", "case big: OutOfMemoryError: CUDA out of memory")], True)
    assert result.status == "ok" and len(calls) == 3
    assert result.extra["host_pressure_retries"] == ["device memory", "device memory"]


def test_device_memory_with_the_gpu_to_itself_is_the_candidates_verdict() -> None:
    result, calls = _run([("runtime_error", "OutOfMemoryError: CUDA out of memory")], False)
    assert result.status == "runtime_error" and len(calls) == 1 and "host_pressure_retries" not in result.extra


def test_a_kernel_that_always_runs_out_of_memory_keeps_its_failure() -> None:
    result, calls = _run([("runtime_error", "OutOfMemoryError: CUDA out of memory")] * 10, True, retries=2)
    assert result.status == "runtime_error" and len(calls) == 3
    assert len(result.extra["host_pressure_retries"]) == 3


def test_a_candidate_process_that_never_started_is_retried_even_alone() -> None:
    result, calls = _run([("crash", START)], False)
    assert result.status == "ok" and result.extra["host_pressure_retries"] == ["candidate process did not start"]


@pytest.mark.parametrize("status,reason", [("incorrect", "case c0: out of memory in the candidate's own words"),
                                           ("crash", "candidate process was killed by SIGSEGV without a result"),
                                           ("timeout", "timing phase exceeded the 600 s timeout")])
def test_the_candidates_own_failures_are_never_retried(status: str, reason: str) -> None:
    result, calls = _run([(status, reason)], True)
    assert result.status == status and len(calls) == 1
