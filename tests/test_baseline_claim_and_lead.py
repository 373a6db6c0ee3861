"""The baseline cache's claim and the timing lead: two things that, when wrong, stalled or biased GPU runs."""

from __future__ import annotations

import multiprocessing
import threading
import time

from evaluators.baselines import BaselineCache
from evaluators.timing import HOST_LEAD_CYCLES, MAX_LEAD_CYCLES, lead_cycles


def test_a_nested_claim_of_a_held_key_does_not_wait_on_itself(tmp_path) -> None:
    # performance.measure re-measured a stale case while holding its claim; flock is per open file, so the
    # nested claim waited forever and every other slot queued behind it (an H100 search stalled at node 9)
    cache = BaselineCache(tmp_path)
    done = threading.Event()

    def nested() -> None:
        with cache.claim("k"), cache.claim("k"):
            done.set()

    worker = threading.Thread(target=nested, daemon=True)
    worker.start()
    worker.join(10)
    assert done.is_set(), "a nested claim of the same key deadlocked"


def _hold(directory: str, key: str, held: multiprocessing.Event, release: multiprocessing.Event) -> None:
    with BaselineCache(directory).claim(key):
        held.set()
        release.wait(30)


def test_a_claim_still_excludes_another_process(tmp_path) -> None:
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold, args=(str(tmp_path), "k", held, release))
    other.start()
    try:
        assert held.wait(60)
        got = threading.Event()

        def claim() -> None:
            with BaselineCache(tmp_path).claim("k"):
                got.set()

        waiter = threading.Thread(target=claim, daemon=True)
        waiter.start()
        time.sleep(0.5)
        assert not got.is_set(), "a second process's claim did not wait"
        release.set()
        waiter.join(30)
        assert got.is_set()
    finally:
        release.set()
        other.join(30)


def test_the_lead_covers_the_measured_host_time_with_a_margin() -> None:
    assert lead_cycles(0.0, 2e9) == HOST_LEAD_CYCLES  # a one-launch call keeps the old ~100 us lead
    assert lead_cycles(0.5e-3, 2e9) == 2_000_000  # 0.5 ms of Python (torch.func.vjp) -> 1 ms of spin
    assert lead_cycles(1.0, 2e9) == MAX_LEAD_CYCLES  # a host-bound call is capped, not spun for seconds
