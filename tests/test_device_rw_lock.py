"""The device lock across processes (evaluators/device_lock.py, issue #31): under ``KE_GPU_LOCK=phases`` checks
share the GPU with each other but never with a timing, and a waiting timing goes before checks that arrive
after it (writer priority); by default only timings exclude each other."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HOLDER = r'''
import sys, time
from evaluators.device_lock import exclusive_device, shared_device
kind, hold, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
lock = exclusive_device if kind == "timing" else shared_device  # "check" and "late" share
with lock(0):
    open(log, "a").write(f"{kind} in {time.monotonic():.4f}\n")
    time.sleep(hold)
    open(log, "a").write(f"{kind} out {time.monotonic():.4f}\n")
'''


def _start(kind: str, hold: float, log: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", HOLDER, kind, str(hold), str(log)], env=env, cwd=ROOT)


def _events(log: Path) -> list[tuple[str, str]]:
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(kind, what) for kind, what, _ in sorted(rows, key=lambda r: float(r[2]))]


def _env(tmp_path: Path, mode: str) -> dict[str, str]:
    return {**os.environ, "KE_DEVICE_LOCK_DIR": str(tmp_path / "locks"), "KE_GPU_LOCK": mode,
            "PYTHONPATH": str(ROOT)}


def _wait_for(log: Path, text: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text():
            return
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {log}")


def test_checks_share_timings_exclude_and_a_waiting_timing_goes_first(tmp_path: Path) -> None:
    env, log = _env(tmp_path, "phases"), tmp_path / "log"
    first = _start("check", 2.0, log, env)
    _wait_for(log, "check in")
    second = _start("check", 0.2, log, env)  # shares the device with the first
    _wait_for(log, "check out")
    timing = _start("timing", 0.5, log, env)  # waits for the first check to leave
    time.sleep(0.5)
    late = _start("late", 0.1, log, env)  # arrives while the timing waits: must not overtake it
    for proc in (first, second, timing, late):
        assert proc.wait(timeout=60) == 0
    events = _events(log)
    assert events[:3] == [("check", "in"), ("check", "in"), ("check", "out")]  # two checks at once
    timing_in, timing_out = events.index(("timing", "in")), events.index(("timing", "out"))
    assert timing_out == timing_in + 1  # nothing entered while the timing held the device
    assert timing_in > max(i for i, e in enumerate(events) if e == ("check", "out"))  # it waited for both checks
    assert events.index(("late", "in")) > timing_out  # writer priority


def test_by_default_only_timings_exclude_each_other(tmp_path: Path) -> None:
    env, log = _env(tmp_path, "timing"), tmp_path / "log"
    timing = _start("timing", 1.5, log, env)
    _wait_for(log, "timing in")
    check = _start("check", 0.1, log, env)  # a no-op lock: runs beside the timing
    other = _start("timing", 0.1, log, env)  # a second timing waits
    for proc in (timing, check, other):
        assert proc.wait(timeout=60) == 0
    events = _events(log)
    assert events.index(("check", "out")) < events.index(("timing", "out"))
    assert events[-2:] == [("timing", "in"), ("timing", "out")]
