"""The device lock across processes (evaluators/device_lock.py, issue #31): by default (``phases``) checks share
the GPU with each other but never with a timing, a waiting timing goes before checks that arrive after it
(writer priority), and a compile lets the device go; with ``KE_GPU_LOCK=timing`` only timings exclude each
other."""

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


def _env(tmp_path: Path, mode: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KE_GPU_LOCK"}
    return {**env, "KE_DEVICE_LOCK_DIR": str(tmp_path / "locks"), "PYTHONPATH": str(ROOT),
            **({"KE_GPU_LOCK": mode} if mode else {})}


def _wait_for(log: Path, text: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text():
            return
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {log}")


def test_checks_share_timings_exclude_and_a_waiting_timing_goes_first(tmp_path: Path) -> None:
    env, log = _env(tmp_path, None), tmp_path / "log"  # the default
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


def test_with_the_timing_mode_only_timings_exclude_each_other(tmp_path: Path) -> None:
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


COMPILER = r'''
import pathlib, sys, time
from evaluators.device_lock import host_work, host_work_wait, shared_device
hold, log = float(sys.argv[1]), sys.argv[2]
with shared_device(0):
    open(log, "a").write(f"check in {time.monotonic():.4f}\n")
    with host_work():  # a compile: no GPU work, the device let go
        open(log, "a").write(f"compile in {time.monotonic():.4f}\n")
        deadline = time.monotonic() + 60  # compiles until a timing got the device meanwhile
        while "timing in" not in pathlib.Path(log).read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(hold)
        open(log, "a").write(f"compile out {time.monotonic():.4f}\n")
    open(log, "a").write(f"back in {time.monotonic():.4f}\n")  # taken back before its kernels launch
    open(log, "a").write(f"waited {host_work_wait():.4f} 0\n")
open(log, "a").write(f"check out {time.monotonic():.4f}\n")
'''


def test_a_compile_lets_the_device_go_and_takes_it_back_behind_a_timing(tmp_path: Path) -> None:
    env, log = _env(tmp_path, "phases"), tmp_path / "log"
    checker = subprocess.Popen([sys.executable, "-c", COMPILER, "0.1", str(log)], env=env, cwd=ROOT)
    _wait_for(log, "compile in")
    timing = _start("timing", 1.0, log, env)  # gets the device while the other process compiles
    assert checker.wait(timeout=60) == 0 and timing.wait(timeout=60) == 0
    rows = [line.split() for line in log.read_text().splitlines()]
    waited = next(float(r[1]) for r in rows if r[0] == "waited")
    events = [(k, w) for k, w, _ in sorted((r for r in rows if r[0] != "waited"), key=lambda r: float(r[2]))]
    assert events.index(("timing", "in")) < events.index(("compile", "out"))  # timed beside the compile
    assert events.index(("back", "in")) > events.index(("timing", "out"))  # the check waited for the timing
    assert waited > 0.5  # and that wait is counted


def test_the_launch_hooks_wrap_tritons_compile() -> None:
    import triton.runtime.jit as jit

    from evaluators.guard import install_launch_hooks

    install_launch_hooks()
    assert getattr(jit.JITFunction._do_compile, "__wrapped__", None) is not None
