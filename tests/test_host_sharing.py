"""Slots on one host share it politely: one nvidia-smi reading per GPU at a time, and CPU thread pools sized
to each slot's share of the cores (issue #15's 2-GPU scaling)."""

from __future__ import annotations

import fcntl
import json
import time

import pytest

from evaluators.gpu_state import _shared_reading
from interpreters.pools import slot_threads, thread_caps


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KE_DEVICE_LOCK_DIR", str(tmp_path))
    return tmp_path


def _counting_query(counter: list[int]):
    def query() -> dict[str, str]:
        counter.append(1)
        return {"clocks.sm": str(1000 + len(counter))}

    return query


def test_fresh_reading_is_shared_until_it_is_stale(lock_dir) -> None:
    calls: list[int] = []
    first = _shared_reading("GPU-abc", _counting_query(calls), ttl_s=60)
    second = _shared_reading("GPU-abc", _counting_query(calls), ttl_s=60)
    assert len(calls) == 1 and first["clocks.sm"] == second["clocks.sm"] == "1001"
    assert float(second["state_age_s"]) < 60
    third = _shared_reading("GPU-abc", _counting_query(calls), ttl_s=0)  # stale at once: refreshed
    assert len(calls) == 2 and third["clocks.sm"] == "1002" and third["state_age_s"] == "0.0"


def test_each_gpu_has_its_own_reading(lock_dir) -> None:
    calls: list[int] = []
    _shared_reading("GPU-a", _counting_query(calls), ttl_s=60)
    _shared_reading("GPU-b", _counting_query(calls), ttl_s=60)
    assert len(calls) == 2


def test_a_stale_reading_is_used_while_another_slot_refreshes(lock_dir) -> None:
    (lock_dir / "ke-gpu-state-GPU-x.json").write_text(json.dumps({"at": time.time() - 120, "state": {"k": "old"}}))
    calls: list[int] = []
    with open(lock_dir / "ke-gpu-state-GPU-x.lock", "a+") as other:  # another slot mid-refresh
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        reading = _shared_reading("GPU-x", _counting_query(calls), ttl_s=10)
    assert calls == [] and reading["k"] == "old" and float(reading["state_age_s"]) >= 120
    refreshed = _shared_reading("GPU-x", _counting_query(calls), ttl_s=10)  # lock free now: this slot refreshes
    assert len(calls) == 1 and "k" not in refreshed


def test_a_failed_query_is_not_cached(lock_dir) -> None:
    assert _shared_reading("GPU-y", lambda: {}, ttl_s=60) == {}
    calls: list[int] = []
    assert _shared_reading("GPU-y", _counting_query(calls), ttl_s=60)["clocks.sm"] == "1001"


def test_thread_caps_split_the_cores_and_keep_the_users_settings(monkeypatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 32)
    assert slot_threads(16) == 2 and slot_threads(64) == 1 and slot_threads(1) == 32
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "7")
    caps = thread_caps(2)
    assert caps["OMP_NUM_THREADS"] == "2" and "MKL_NUM_THREADS" not in caps
    assert thread_caps(None) == {}


def test_a_local_slot_passes_its_caps_to_its_worker(tmp_path, monkeypatch) -> None:
    from interpreters.pools import LocalSlot

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    slot = LocalSlot("cpu", False, tmp_path, 120.0, threads=3)  # the worker process starts on first use
    try:
        env = slot.executor._worker._env
        assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "3"
    finally:
        slot.close()


def test_the_query_names_the_gpu_and_reads_every_field(tmp_path, monkeypatch) -> None:
    from evaluators.gpu_state import _query

    fake = tmp_path / "nvidia-smi"  # a stand-in on PATH that records how it was called
    fake.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/args\n"
                    "echo '1980 MHz, 2619 MHz, 1980 MHz, 37, 106.87 W, 580.159.04'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    state = _query("GPU-fb3c02b4")
    assert "--id=GPU-fb3c02b4" in (tmp_path / "args").read_text()
    assert state["clocks.sm"] == "1980 MHz" and state["driver_version"] == "580.159.04"
    fake.write_text("#!/bin/sh\necho 'No devices were found'\n")  # a reply without the fields: no reading
    assert _query("GPU-fb3c02b4") == {}
