"""Device timing (docs/architecture.md §6): warm-up, L2 flush before every repetition, CUDA events, medians and IQR,
with candidate and baselines interleaved in one session so clock drift and thermal state cancel.

Every call, timed or not, gets freshly written inputs (``fresh``, :mod:`evaluators.fresh_inputs`), and a
random sample of the timed calls of each checked callable (one in every ``SAMPLE_BATCH`` repetitions, the
repetition drawn from the OS's entropy after the fact) has its output checked against the reference for that
call's inputs: a result remembered from an earlier call, or work left undone, fails the check instead of
being timed as a win.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from evaluators.job import FULL_TARGET_MS
from evaluators.seeding import seed_forward

# A GPU-side spin of ~100 us between the L2 flush and the start event, so the host has already queued the
# timed launch when the GPU reaches the start event. Without it, a short kernel's time includes the idle gap
# while Python launches it (seen on an H200: swish on 1M floats read 6.1 us in one session, 18.5 in the next).
HOST_LEAD_CYCLES = 200_000
# The lead must outlast the host's work to enqueue the timed call. A reference built from many small ops, or
# through torch.func (vjp), can take 0.3-0.6 ms of Python per call; with a fixed ~100 us lead that host time
# leaked into its "device" time (rmsnorm_backward's eager read 0.62 ms on an H100 against ~0.1 ms of
# kernels). So the lead is sized from each session's measured host time per call, with a margin.
LEAD_MARGIN = 2.0
MAX_LEAD_CYCLES = 40_000_000  # ~20 ms at 2 GHz: a call that needs more is host-bound whatever we do
_FALLBACK_GPU_HZ = 2.0e9
SAMPLE_BATCH = 16  # at least one checked timed call in every this many repetitions of a checked callable
# A median's standard error is about 1.2533 sigma / sqrt(n) (normal samples), and sigma about IQR / 1.349.
_MEDIAN_SE_PER_IQR = 1.2533 / 1.349
_ENTROPY = random.SystemRandom()  # not the process's seeded generators, which candidate code could read


class Rewriter(Protocol):
    def advance(self) -> int: ...


# called with (the call's output, which input content it was given, the repetition); raises to reject
OutputCheck = Callable[[Any, int, int], None]


@dataclass
class Timing:
    median_ms: float
    iqr_ms: float
    reps: int
    samples_ms: list[float]
    host_ms: float = 0.0  # host time to enqueue one call (a call that syncs inside includes its wait)


def interleaved_timings(
    fns: dict[str, Callable[[], object]],
    target_ms_per_fn: float = FULL_TARGET_MS,
    min_reps: int = 15,
    max_reps: int = 500,
    warmup: int = 5,
    reps: int | None = None,
    fresh: Rewriter | None = None,
    checks: dict[str, OutputCheck] | None = None,
    precision: float | None = None,
) -> dict[str, Timing]:
    """Time several zero-argument callables against each other on the current CUDA device.

    Each repetition flushes L2 by writing a buffer twice its size, spins the GPU briefly so the launch is
    queued ahead of it, then times one call with CUDA events (device time, host launch cost excluded);
    the order of callables rotates every repetition so none always runs right after the flush. ``reps``
    fixes the repetitions (screening); otherwise they are chosen to fill ``target_ms_per_fn`` per callable.

    ``fresh`` rewrites the inputs the callables read before every call (the rewrite runs before the flush
    and the start event: it is never measured). ``checks`` names callables whose sampled timed outputs are
    handed, with the content index ``fresh`` returned, to a check that raises to reject.

    ``precision`` (a search node's timing) stops early, at the end of a batch of ``SAMPLE_BATCH`` repetitions
    once at least two batches ran, when every callable's median is known to that relative standard error.
    Why: the timing holds the GPU exclusively, so its length caps how many slots one GPU keeps busy; a
    steady 20 us kernel is pinned to 0.2% in 32 repetitions, and the chosen count (up to ``max_reps``) is
    then mostly wasted. A noisy callable still runs to the chosen count.
    """
    advance = fresh.advance if fresh is not None else (lambda: 0)
    checks = checks or {}
    flush = _flush_buffer()
    for fn in fns.values():
        for _ in range(warmup):
            advance()
            fn()
    torch.cuda.synchronize()
    host = {name: _host_seconds(fn, advance) for name, fn in fns.items()}
    lead = lead_cycles(max(host.values()), _gpu_hz())
    if reps is None:
        reps = _choose_reps(fns, flush, target_ms_per_fn, min_reps, max_reps, advance)
    names = list(fns)
    sampled = {name: sample_reps(reps) for name in checks}
    events: dict[str, list[tuple[torch.cuda.Event, torch.cuda.Event]]] = {n: [] for n in names}
    least = max(min_reps, 2 * SAMPLE_BATCH)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            content = advance()
            flush.zero_()
            torch.cuda._sleep(lead)  # see HOST_LEAD_CYCLES
            if name in checks and rep in sampled[name]:  # its check draws what the call drew (seeding.py)
                seed_forward(0, 2 + rep)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            result = fns[name]()
            end.record()
            events[name].append((start, end))
            if name in checks and rep in sampled[name]:
                checks[name](result, content, rep)
            del result  # before the next rewrite: nothing of this call is alive in the next one's window
        done = rep + 1
        if precision is not None and done >= least and done % SAMPLE_BATCH == 0 and done < reps:
            torch.cuda.synchronize()  # every batch so far is whole, so each kept its sampled checked call
            if all(median_settled([s.elapsed_time(e) for s, e in pairs], precision) for pairs in events.values()):
                break
    torch.cuda.synchronize()
    out = {}
    for name, pairs in events.items():
        samples = [s.elapsed_time(e) for s, e in pairs]
        out[name] = Timing(statistics.median(samples), _iqr(samples), len(samples), samples, host[name] * 1e3)
    return out


def median_settled(samples: list[float], precision: float) -> bool:
    """Whether the samples' median is known to ``precision`` (relative standard error, from their IQR)."""
    if len(samples) < 4:
        return False
    middle = statistics.median(samples)
    return middle > 0 and _MEDIAN_SE_PER_IQR * _iqr(samples) / (middle * math.sqrt(len(samples))) <= precision


def lead_cycles(host_seconds: float, gpu_hz: float) -> int:
    """GPU cycles to spin before a timed call so its launches are all queued when the start event fires."""
    return int(min(MAX_LEAD_CYCLES, max(HOST_LEAD_CYCLES, LEAD_MARGIN * host_seconds * gpu_hz)))


def sample_reps(reps: int, batch: int = SAMPLE_BATCH) -> set[int]:
    """One repetition drawn at random from every batch of ``batch`` (the last, partial batch included)."""
    return {_ENTROPY.randrange(lo, min(lo + batch, reps)) for lo in range(0, reps, batch)}


def _host_seconds(fn: Callable[[], object], advance: Callable[[], int], calls: int = 3) -> float:
    """Median host time to enqueue one call, each measured from an idle device."""
    spans = []
    for _ in range(calls):
        advance()
        torch.cuda.synchronize()
        started = time.perf_counter()
        fn()
        spans.append(time.perf_counter() - started)
    torch.cuda.synchronize()
    return statistics.median(spans)


def _gpu_hz() -> float:
    """The SM clock in Hz where torch reports it (``clock_rate`` in kHz), else a 2 GHz guess."""
    khz = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "clock_rate", 0) or 0
    return float(khz) * 1e3 if khz else _FALLBACK_GPU_HZ


def _flush_buffer() -> torch.Tensor:
    l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0) or (50 << 20)
    return torch.empty(max(2 * l2, 64 << 20), dtype=torch.int8, device="cuda")


def _choose_reps(fns: dict, flush: torch.Tensor, target_ms: float, lo: int, hi: int,
                 advance: Callable[[], int]) -> int:
    """Repetitions that fill about ``target_ms`` per callable, counting a round's rewrites and flushes."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        for fn in fns.values():
            advance()
            flush.zero_()
            fn()
    end.record()
    torch.cuda.synchronize()
    per_round = max(start.elapsed_time(end) / 3, 1e-3)
    return int(min(hi, max(lo, target_ms * len(fns) / per_round)))


def _iqr(samples: list[float]) -> float:
    if len(samples) < 4:
        return 0.0
    q = statistics.quantiles(samples, n=4)
    return q[2] - q[0]
