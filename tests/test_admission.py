"""Admission to a device's memory (issue #28 item 2), against a stated capacity on the CPU.

The ledger is the real one (a file under flock shared by processes); the capacity is stated through
``KE_DEVICE_CAPACITY_BYTES``, which the worker also honours on the CPU interpreter so that slots, waits and
``too_large`` run here exactly as they do on a GPU.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluators.admission import GIB, PEAK_SLACK, Ledger, TooLarge, estimated_peak
from interpreters.sandbox import EvaluationWorker

ROOT = Path(__file__).resolve().parent.parent
SWISH = ROOT / "kernelevolve" / "builtin_specs" / "swish.py"
HONEST = ROOT / "tests" / "adversarial" / "candidates" / "honest__swish_autotune.py"


def _ledger(tmp_path: Path, capacity: int) -> Ledger:
    return Ledger(tmp_path / "ledger.json", capacity)


def test_a_node_that_does_not_fit_beside_another_waits_for_it(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 10 * GIB)
    order: list[str] = []

    def second() -> float:
        with ledger.reserve(f"{_pid()}:b", 6 * GIB) as waited:
            order.append("b")
            return waited

    first = ledger.reserve(f"{_pid()}:a", 6 * GIB)
    first.__enter__()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(second)
        time.sleep(0.8)
        assert not future.done(), "a second 6 GiB node was admitted beside the first on a 10 GiB device"
        order.append("a released")
        first.__exit__(None, None, None)
        assert future.result(timeout=10) >= 0.7
    assert order == ["a released", "b"]
    assert ledger.usage() == (0, 0)


def test_a_node_larger_than_the_device_alone_is_too_large_and_says_by_how_much(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 10 * GIB)
    ledger.set_resident(f"{_pid()}:slot", 2 * GIB)  # contexts of this slot: never lent to a node
    with pytest.raises(TooLarge) as info:
        with ledger.reserve(f"{_pid()}:a", 9 * GIB):
            pass
    assert str(info.value) == ("needs 9.0 GiB of device memory, the device has 8.0 GiB for evaluations "
                               "(10.0 GiB less 2.0 GiB held by its slots)")
    with ledger.reserve(f"{_pid()}:a", 8 * GIB):  # exactly what is left: admitted
        assert ledger.usage() == (2 * GIB, 8 * GIB)


def test_a_dead_holders_reservation_is_dropped(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 10 * GIB)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    Ledger(ledger.path, ledger.capacity).set_resident(f"{dead}:slot", 9 * GIB)  # written while "alive"
    with ledger.reserve(f"{_pid()}:a", 9 * GIB) as waited:  # its process is gone: the 9 GiB are free
        assert waited < 1.0


def test_first_come_first_served_a_large_waiter_is_not_starved_by_small_ones(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, 10 * GIB)
    admitted: list[str] = []

    def node(label: str, nbytes: int) -> None:
        with ledger.reserve(f"{_pid()}:{label}", nbytes):
            admitted.append(label)
            time.sleep(0.3)

    first = ledger.reserve(f"{_pid()}:first", 4 * GIB)
    first.__enter__()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        big = pool.submit(node, "big", 8 * GIB)  # waits for "first"
        time.sleep(0.6)
        small = pool.submit(node, "small", 5 * GIB)  # would fit beside "first", but not beside "big"
        time.sleep(0.8)
        assert admitted == [], "a later, smaller node passed a waiting larger one that it would block"
        first.__exit__(None, None, None)  # "big" goes in; "small" follows once "big" is done
        big.result(timeout=10)
        small.result(timeout=10)
    assert admitted == ["big", "small"]


def test_estimated_peak_is_three_case_bytes_plus_slack() -> None:
    assert estimated_peak(2 * GIB) == 6 * GIB + PEAK_SLACK


@pytest.fixture()
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KE_DEVICE_LOCK_DIR", str(tmp_path))
    return tmp_path


def _job(tmp_path: Path) -> dict:
    return {"spec_path": str(SWISH), "candidate_path": str(HONEST), "device": "cpu", "target": "cpu",
            "timeout_s": 120}


def test_worker_reports_too_large_as_its_own_status_not_a_kernel_verdict(lock_dir: Path) -> None:
    with EvaluationWorker({"TRITON_INTERPRET": "1", "KE_DEVICE_CAPACITY_BYTES": str(GIB)}) as worker:
        result = worker.evaluate(_job(lock_dir))
    assert result.status == "too_large", result.reason
    assert result.reason.startswith("not run: needs 1.0 GiB of device memory, the device has 1.0 GiB"), result.reason
    assert "3x its case's" in result.reason and not result.cases


def test_two_slots_sharing_a_device_take_turns_when_only_one_fits(lock_dir: Path) -> None:
    capacity = PEAK_SLACK + (PEAK_SLACK // 2)  # one swish evaluation (1 GiB + its small case), never two
    env = {"TRITON_INTERPRET": "1", "KE_DEVICE_CAPACITY_BYTES": str(capacity)}
    with EvaluationWorker(env) as one, EvaluationWorker(env) as two:
        one.start(), two.start()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda w: w.evaluate(_job(lock_dir)), [one, two]))
    assert [r.status for r in results] == ["ok", "ok"], [r.reason for r in results]
    admissions = sorted(r.extra["admission"]["waited_s"] for r in results)
    durations = sorted(r.eval_seconds for r in results)
    assert admissions[0] < 0.5 and admissions[1] >= 0.5 * durations[0], (admissions, durations)
    assert all(r.extra["admission"]["reserved_bytes"] > PEAK_SLACK for r in results)


def _pid() -> int:
    import os

    return os.getpid()


def test_a_search_whose_problem_cannot_fit_stops_in_one_line_with_too_large_nodes(lock_dir: Path) -> None:
    import json
    import os

    from helpers.store_checks import node_evaluations as _nodes

    state = lock_dir / "state"
    env = {**os.environ, "KE_DEVICE_CAPACITY_BYTES": str(GIB)}  # under one evaluation's 1 GiB slack
    search = subprocess.run([sys.executable, "-m", "kernelevolve.cli.main", "search", "--executor", "local",
                             "--json", "--state-dir", str(state), "--op", "swish", "--hw", "cpu", "--budget", "3"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert search.returncode == 1
    errors = [line for line in search.stderr.strip().splitlines() if line.startswith("ke: error:")]
    assert len(errors) == 1 and "the problem does not fit this device, so no kernel was judged" in errors[0], errors
    assert "needs 1.0 GiB of device memory, the device has 1.0 GiB" in errors[0], errors
    nodes = _nodes(state)
    assert nodes and {n["status"] for n in nodes} == {"too_large"}, nodes  # counted apart, never a kernel verdict
    assert len(nodes) < 3  # the run stopped at the first one (nodes in flight may finish)
    runs = subprocess.run([sys.executable, "-m", "kernelevolve.cli.main", "runs", "--json", "--state-dir",
                           str(state)], capture_output=True, text=True, timeout=120)
    (run,) = json.loads(runs.stdout)["runs"]
    assert run["status"] == "failed"


def test_a_problem_that_measured_more_than_its_estimate_reserves_what_it_measured() -> None:
    """A kernel's own scratch (cuDNN's workspace, a draft's intermediates) can take an evaluation past 3x its case;
    the next node of that problem reserves the measured peak and a tenth, never less than the estimate."""
    from evaluators.slot_judge import SlotJudge

    judge = SlotJudge()
    spec, which = str(SWISH), "test"
    estimate = estimated_peak(judge.case_bytes(spec, which) or 0)
    assert judge.reservation(spec, which) == estimate
    judge.memory = {"case_bytes": 0, "peak_bytes": 3 * estimate}
    judge.learned(spec, which, "cpu")
    assert judge.reservation(spec, which) == 3 * estimate + (3 * estimate) // 10
    judge.memory = {"case_bytes": 0, "peak_bytes": estimate // 2}  # a leaner candidate does not lower it
    judge.learned(spec, which, "cpu")
    assert judge.reservation(spec, which) == 3 * estimate + (3 * estimate) // 10
