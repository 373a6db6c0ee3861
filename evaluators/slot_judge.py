"""The evaluation worker's judge: compares a candidate process's outputs with the reference's on the device that
made them, and keeps what the slot knows of device memory (its ledger, what each problem's evaluations
measured, this evaluation's peaks). One per worker process; untrusted code never runs in it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from evaluators.device_lock import shared_device
from evaluators.job import EvaluationJob

RELEASE_ABOVE = 256 << 20  # unused cached device bytes the judge gives back after a judgement
CONTEXTS = 3  # CUDA contexts a slot keeps: the worker's, its candidate process's and the spare's


class SlotJudge:
    """Compares a candidate process's outputs with cached reference outputs, on the device that made them."""

    def __init__(self) -> None:
        self.fatal = False
        self.server_pid: int | None = None  # the fork server the last evaluation's candidate process came from
        self._caches: dict[str, Any] = {}
        self._specs: dict[str, Any] = {}
        self.memory: dict[str, Any] = {}  # this evaluation's device memory: peaks per process and together
        self._candidate_held = 0  # what the candidate process keeps allocated while this one judges
        self.holder = str(os.getpid())  # this slot's key in the device's memory ledger
        self.notify: Any = None  # (job id, seconds waited) -> None: tells the host a node waits for memory
        self.progress: Any = None  # (job id, step) -> None: tells the host a judged step of a long job ended
        self._ledgers: dict[str, Any] = {}
        self._resident = 0
        self._case_bytes: dict[tuple[str, str], int | None] = {}
        self._peaks: dict[tuple[str, str], int] = {}  # the largest evaluation peak measured per (spec, cases)

    def ledger(self, device: str) -> Any:
        """This device's memory ledger (None on the CPU interpreter, unless a capacity is stated for tests)."""
        from evaluators.admission import CONTEXT_BYTES, Ledger, ledger_path

        if device not in self._ledgers:
            if device == "cpu":
                stated = os.environ.get("KE_DEVICE_CAPACITY_BYTES")
                self._ledgers[device] = Ledger(ledger_path(0), int(stated)) if stated else None
                self._resident = 0
            else:
                import torch

                total = torch.cuda.get_device_properties(0).total_memory
                self._ledgers[device] = Ledger.for_device(0, total)
                self._resident = CONTEXTS * CONTEXT_BYTES
            if self._ledgers[device] is not None:
                self._ledgers[device].set_resident(self.holder, self._resident)
        return self._ledgers[device]

    def case_bytes(self, spec_path: str, which: str) -> int | None:
        """A case's bytes: what the last evaluation of this spec measured, else the meta device's estimate."""
        from evaluators.footprint import case_bytes

        key = (spec_path, which)
        if key not in self._case_bytes:
            try:
                self._case_bytes[key] = case_bytes(self.spec(spec_path), which)
            except Exception:  # noqa: BLE001 - an unloadable spec: the evaluation says why
                self._case_bytes[key] = None
        return self._case_bytes[key]

    def learned(self, spec_path: str, which: str, device: str) -> None:
        """After an evaluation: keep its measured case bytes, and tell the ledger what this slot now holds."""
        measured = self.memory.get("case_bytes") or 0
        if measured:
            self._case_bytes[(spec_path, which)] = max(measured, self._case_bytes.get((spec_path, which)) or 0)
        key = (spec_path, which)
        self._peaks[key] = max(self._peaks.get(key, 0), int(self.memory.get("peak_bytes") or 0))
        cache = self._caches.get(device)
        ledger = self._ledgers.get(device)
        if ledger is not None:
            ledger.set_resident(self.holder, self._resident + (cache.held_bytes if cache is not None else 0))

    def reservation(self, spec_path: str, which: str) -> int:
        """What admission reserves for an evaluation of this spec: the estimate from its case's bytes, or more
        where an earlier evaluation here measured more (a kernel's own scratch, cuDNN's workspace under an
        eager convolution, can be gigabytes on a small case), with a tenth for another candidate's variation."""
        from evaluators.admission import estimated_peak

        measured = self._peaks.get((spec_path, which), 0)
        return max(estimated_peak(self.case_bytes(spec_path, which) or 0), measured + measured // 10)

    def begin(self, device: str) -> None:
        """A new evaluation: its memory record starts from what this process already holds (its cache)."""
        self.memory = {"candidate_peak_bytes": 0, "judge_peak_bytes": 0, "case_bytes": 0, "peak_bytes": 0}
        self._candidate_held = 0
        if device != "cpu" and "torch" in sys.modules:
            import torch

            self.memory["judge_held_bytes"] = torch.cuda.memory_allocated()

    def note_candidate(self, reply: dict[str, Any], where: str) -> None:
        """A candidate process's reply: its peak during that command (while this process held only what it holds
        between judgements), what it keeps for the judge, and the bytes of the cases it ran."""
        peak, held = int(reply.get("peak_bytes") or 0), int(reply.get("held_bytes") or 0)
        self._scratch(reply.get("scratch_bytes") or {})
        self.memory["candidate_peak_bytes"] = max(self.memory.get("candidate_peak_bytes", 0), peak)
        self._step(peak + self.memory.get("judge_held_bytes", 0), where)
        self._candidate_held = held
        sizes = [int(v) for v in (reply.get("case_bytes") or {}).values()]
        self.memory["case_bytes"] = max([self.memory.get("case_bytes", 0), *sizes])

    def _scratch(self, seen: dict[str, int]) -> None:
        """The kernels' own working memory beyond their outputs (candidate, eager, compile, reference), largest
        per kernel: part of the peak, but the kernels', not the evaluator's (evaluators/memory_probe.py)."""
        mine = self.memory.setdefault("scratch_bytes", {})
        for label, size in seen.items():
            mine[label] = max(mine.get(label, 0), int(size))

    def _step(self, total: int, where: str) -> None:
        """One step's device memory across both processes (they take turns: the other one only holds)."""
        if total > self.memory.get("peak_bytes", 0):
            self.memory["peak_bytes"], self.memory["peak_in"] = total, where

    def release(self, device: str, where: str) -> None:
        """After judging: record this step's peak (with what the candidate process held meanwhile) and hand
        unused cached blocks back to the GPU, which the next phase (the candidate's timing, another slot's
        node) needs more than this process's allocator."""
        if device == "cpu":
            return
        import torch

        from evaluators import memory_probe

        peak = memory_probe.peak()
        self._scratch(memory_probe.scratches())
        self.memory["judge_peak_bytes"] = max(self.memory.get("judge_peak_bytes", 0), peak)
        self._step(peak + self._candidate_held, where)
        self.memory["judge_held_bytes"] = torch.cuda.memory_allocated()
        if torch.cuda.memory_reserved() - torch.cuda.memory_allocated() > RELEASE_ABOVE:
            torch.cuda.empty_cache()

    def spec(self, path: str) -> Any:
        from evaluators.spec import load_spec

        if path not in self._specs:  # pools write each spec text under its own hash: a path is one text
            self._specs[path] = load_spec(path)
        return self._specs[path]

    def __call__(self, job: EvaluationJob, which: str, device: str, seeds: list[int], message: dict[str, Any],
                 workdir: Path, calls: tuple[int, ...] = (0, 1)) -> tuple[str, Any]:
        from evaluators.correctness import CALLS, judge
        from evaluators.tensor_transport import TransportError, receive_outputs

        spec = self.spec(job.spec_path)
        if device not in self._caches:
            from evaluators.judging import ReferenceCache
            from evaluators.numerics import configure_numerics

            configure_numerics()
            self._caches[device] = ReferenceCache.for_device(device)
        cache = self._caches[device]
        if device != "cpu":
            from evaluators import memory_probe

            memory_probe.reset()
        try:
            # the reference runs and the comparison reads on the GPU: held beside checks, never beside a timing
            with shared_device(_device_index(device)):
                outputs = receive_outputs(message, str(workdir))
                cases = judge(spec, which, device, seeds, outputs,
                              lambda s, c: cache.calls(spec, which, device, s, c), calls)
                del outputs
        except TransportError as exc:
            return "crash", f"candidate outputs could not be read: {exc}"
        except RuntimeError as exc:
            if isinstance(exc, MemoryError) or "out of memory" in str(exc):  # pressure, not a fault: stay up
                return "crash", f"judging ran out of device memory: {' '.join(str(exc).split())[:200]}"
            if device != "cpu" and "CUDA" in str(exc):
                self.fatal = True
                return "crash", f"reading the candidate's outputs faulted the device: {exc}"
            raise
        finally:
            if device != "cpu":
                import torch

                torch.cuda.ipc_collect()
            where = f"judge, seed {','.join(map(str, seeds))} call {','.join(CALLS[c] for c in calls)}"
            self.release(device, where)
        return "ok", cases


def _device_index(device: str) -> int | None:
    """The CUDA device this process judges on, or None on the cpu target (no device lock there)."""
    if device == "cpu":
        return None
    import torch

    return torch.cuda.current_device()
