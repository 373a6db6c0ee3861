"""Evaluation pools: several evaluations in flight on one target (docs/architecture.md §9).

A pool owns a fixed number of *slots* (a sandboxed local worker process, or a Ray actor holding a device)
and runs each request on a free one. When a slot is lost (its actor or node died), the request is retried on a
replacement slot, so one dead machine costs a retry, not the run. Requests name the spec by its content hash
(:mod:`interpreters.spec_shelf`), not by a path, because a remote slot cannot see the orchestrator's files.
"""

from __future__ import annotations

import logging
import os
import queue
import random
import re
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evaluators.result import EvaluationResult
from interpreters.spec_shelf import SpecRef, materialize

log = logging.getLogger("interpreters.pools")


@dataclass(frozen=True)
class EvaluationRequest:
    target: str
    simulate: bool
    spec: SpecRef  # by content hash: the text is shelved once per run and crosses to a slot once
    source: str
    timeout_s: float = 120.0
    # Search nodes: skip full timing when a short measurement is below this fitness (evaluators.performance).
    screen_below: float | None = None
    final: bool = False  # a winner's re-measurement: full timing at full length, with the profiler
    check_seeds: int | None = None  # random input seeds correctness is checked on (None: the executor's default)


_DEVICE_MEMORY = re.compile(r"out of memory|OutOfMemoryError|cudaErrorMemoryAllocation", re.I)
PRESSURE_BACKOFF_S = (1.0, 4.0)  # a random pause before a retry, so the slots that collided spread out


def host_pressure(result: EvaluationResult, shared_device: bool) -> str | None:
    """Why a failed evaluation is the shared host's fault rather than the candidate's, or None.

    Slots that share a GPU share its memory: with 12 slots on an 80 GB H100, softmax nodes failed with CUDA
    out-of-memory in the judge and in correct candidates (issue #15), and each such node counted as a broken
    kernel. A candidate process that never started ran no candidate code at all. Both are retried; a kernel
    that really needs more memory than the device has fails every retry and keeps its verdict."""
    if result.status not in ("crash", "runtime_error"):
        return None
    if result.reason.startswith(("start process", "start phase")):
        return "candidate process did not start"
    if shared_device and _DEVICE_MEMORY.search(result.reason):
        return "device memory"
    return None


class SlotLost(Exception):
    """The slot died under a request (actor or node lost); the request may be retried on another slot."""


class HarnessFailure(Exception):
    """The evaluator's own machinery failed on a request every time it was tried (a worker, its fork server or
    judge, a scratch file it lost): no verdict on the candidate exists, so the node must not be charged."""


def harness_failure(result: EvaluationResult) -> str | None:
    """Why a result is the evaluator's failure rather than the candidate's, or None. The worker reports an
    exception of its own harness (not of candidate code, which runs in another process) as "evaluator error";
    on an H100 one such fault was charged to 54 nodes of 17 runs within 3 seconds (issue #28)."""
    if result.status == "crash" and result.reason.startswith("evaluator error"):
        return result.reason
    return None


class Slot(Protocol):
    def evaluate(self, request: EvaluationRequest) -> EvaluationResult: ...

    def close(self) -> None: ...


def default_scratch() -> Path:
    """Per-host scratch for workers that do not share the orchestrator's state directory."""
    return Path(tempfile.gettempdir()) / "kernelevolve-worker" / "scratch"


class LocalSlot:
    """One sandboxed evaluation worker process on this host, optionally pinned to one device."""

    def __init__(self, target_name: str, simulate: bool, scratch: Path, timeout_s: float,
                 device_index: int | None = None, on_close: Callable[[], None] | None = None,
                 threads: int | None = None) -> None:
        from evaluators.device_lock import physical_device
        from interpreters.executor import LocalExecutor
        from interpreters.targets import get_target

        self.scratch = scratch
        self._on_close = on_close
        env = thread_caps(threads)
        if device_index is not None:  # through this process's own visible list: index 0 of "4,5" is GPU 4
            physical = physical_device(device_index)
            env.update({"CUDA_VISIBLE_DEVICES": physical, "HIP_VISIBLE_DEVICES": physical})
        self.executor = LocalExecutor(get_target(target_name), scratch, timeout_s=timeout_s, simulate=simulate,
                                      extra_env=env)

    def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        spec_path = materialize(self.scratch, request.spec)
        self.executor.timeout_s = request.timeout_s
        return self.executor.evaluate(spec_path, request.source, screen_below=request.screen_below,
                                      final=request.final, seeds=request.check_seeds)

    def close(self) -> None:
        self.executor.close()
        if self._on_close is not None:
            self._on_close()
            self._on_close = None


_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def thread_caps(threads: int | None) -> dict[str, str]:
    """CPU thread pools sized to a slot's share of the host, except where the user set them.

    Why: each slot runs a worker and a candidate process, and torch, OpenMP and BLAS size their pools to
    every core by default, spinning after each parallel region. Sixteen slots on a 32-core host therefore
    ran hundreds of spinning threads, and every host-side phase slowed with the slot count (issue #15)."""
    if not threads:
        return {}
    return {var: str(threads) for var in _THREAD_VARS if var not in os.environ}


def slot_threads(slots: int) -> int:
    """Cores per slot on this host (at least one)."""
    return max(1, (os.cpu_count() or 1) // max(1, slots))


class SlotPool:
    """``size`` slots for one target; slots are created on first use and replaced when lost."""

    def __init__(self, make_slot: Callable[[], Slot], size: int, retries: int = 3, name: str = "",
                 on_lost: Callable[[str, str], None] | None = None, shared_device: bool = False) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one slot")
        self.name, self.size, self.retries = name, size, retries
        self.shared_device = shared_device  # several slots per device: out-of-memory may be theirs, not the node's
        self._make_slot = make_slot
        self._on_lost = on_lost
        self._free: queue.Queue[Slot | None] = queue.Queue()
        for _ in range(size):
            self._free.put(None)  # None: a slot still to be created
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"pool-{name}")
        self._slots: list[Slot] = []
        self._lock = threading.Lock()
        self.lost = 0
        self._closed = False

    def submit(self, request: EvaluationRequest) -> Future[EvaluationResult]:
        return self._threads.submit(self._run, request)

    def _run(self, request: EvaluationRequest) -> EvaluationResult:
        last, pressured = "", []
        for attempt in range(self.retries + 1):
            slot = self._free.get()
            try:
                if slot is None:
                    slot = self._make_slot()
                    with self._lock:
                        self._slots.append(slot)
                result = slot.evaluate(request)
            except SlotLost as exc:
                if self._closed:  # the pool's own close killed it (an interrupt): nothing lost, nothing to say
                    raise
                last = str(exc)
                with self._lock:
                    self.lost += 1
                log.warning("slot lost in pool %s (attempt %d): %s; retrying on a replacement", self.name,
                            attempt + 1, last)
                if self._on_lost:
                    self._on_lost(self.name, last)
                self._discard(slot)
                self._free.put(None)
                continue
            except OSError as exc:  # the harness around the worker (its scratch, its pipes): restart the slot
                result = EvaluationResult.failure("crash", f"evaluator error: {type(exc).__name__}: {exc}")
            except BaseException:
                self._free.put(slot)
                raise
            harness = harness_failure(result)
            if harness is not None:
                last = harness
                log.info("pool %s: %s (attempt %d); restarting the slot and retrying", self.name, harness[:160],
                         attempt + 1)  # info: a run that stops for it says so in one line (orchestrator)
                self._discard(slot)
                self._free.put(None)
                continue
            self._free.put(slot)
            pressure = host_pressure(result, self.shared_device)
            if pressure is not None:
                pressured.append(pressure)
                if attempt < self.retries:
                    log.info("pool %s: %s (%s); retrying", self.name, pressure, result.reason[:120])
                    time.sleep(random.uniform(*PRESSURE_BACKOFF_S))
                    continue
            if pressured:
                result.extra["host_pressure_retries"] = pressured
            return result
        if last.startswith("evaluator error"):
            raise HarnessFailure(f"the evaluator failed {self.retries + 1} times on one node in pool {self.name}, "
                                 f"last: {last}")
        return EvaluationResult.failure("crash", f"evaluation lost {self.retries + 1} times: {last}")

    def _discard(self, slot: Slot | None) -> None:
        if slot is None:
            return
        with self._lock:
            if slot in self._slots:
                self._slots.remove(slot)
        try:
            slot.close()
        except Exception as exc:  # noqa: BLE001 - a dead slot may fail to close; that is why it is discarded
            log.debug("closing a lost slot failed: %s", exc)

    def close(self) -> None:
        """Stop every slot. A request still running may retry, but gets no new slot: one made now would outlive
        the pool (a worker process, or a Ray actor, which would even start a new local Ray after ray.shutdown)."""

        def closed() -> Slot:
            raise RuntimeError(f"pool {self.name} is closed")

        self._closed = True
        self._make_slot = closed
        self._threads.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            slots, self._slots = self._slots, []
        for slot in slots:
            try:
                slot.close()
            except Exception as exc:  # noqa: BLE001
                log.debug("closing a slot failed: %s", exc)


class PoolSet:
    """One pool per (target, simulated), created on demand, all of the same kind (local or Ray)."""

    def __init__(self, make_pool: Callable[[str, bool], SlotPool]) -> None:
        self._make_pool = make_pool
        self._pools: dict[tuple[str, bool], SlotPool] = {}
        self._lock = threading.Lock()

    def pool(self, target: str, simulate: bool) -> SlotPool:
        with self._lock:
            key = (target, simulate)
            if key not in self._pools:
                self._pools[key] = self._make_pool(target, simulate)
            return self._pools[key]

    def submit(self, request: EvaluationRequest) -> Future[EvaluationResult]:
        return self.pool(request.target, request.simulate).submit(request)

    def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        return self.submit(request).result()

    @property
    def lost(self) -> int:
        return sum(p.lost for p in self._pools.values())

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()


def matching_devices(target_name: str, simulate: bool) -> list[int] | None:
    """Indices of this host's devices that serve ``target_name``; None when it needs no device."""
    from interpreters.targets import get_target, is_present, present_devices

    target = get_target(target_name)
    if not target.runs_on_device(simulate):
        return None
    return [i for i, name in enumerate(present_devices()) if is_present(target, [name])]


def local_pools(scratch: Path, size: int) -> PoolSet:
    """Pools of sandboxed worker processes on this host (``--executor local``).

    A device target gets ``size`` slots spread round-robin over the matching devices, each slot pinned to
    its device. Several slots may share a GPU: they overlap their CPU work (Triton and Inductor compilation,
    correctness checks), while the timed loops take the device's lock (:mod:`evaluators.device_lock`), so
    no two timings ever share a GPU."""

    def make_pool(target: str, simulate: bool) -> SlotPool:
        devices = matching_devices(target, simulate)
        threads = slot_threads(size)
        if devices is None:
            return SlotPool(lambda: LocalSlot(target, simulate, scratch, 120.0, threads=threads), size, name=target)
        if not devices:
            raise RuntimeError(f"no device on this host serves target {target}")
        free: queue.Queue[int] = queue.Queue()
        for slot in range(size):
            free.put(devices[slot % len(devices)])

        def make_slot() -> LocalSlot:
            index = free.get_nowait()
            return LocalSlot(target, simulate, scratch, 120.0, index, lambda: free.put(index), threads)

        return SlotPool(make_slot, size, name=target, shared_device=size > len(devices))

    return PoolSet(make_pool)
