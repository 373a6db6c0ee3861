"""Where candidates are generated: threads on this host, or Ray tasks on the cluster's CPU workers.

Generation is separate from evaluation (docs/architecture.md §9): an LLM call waits on the network and the offline
operator needs only a CPU, so neither should hold a device slot. A task carries everything the operator needs (the
parent and a context with its own RNG), so it runs the same wherever it is sent.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from kernelevolve.operators.base import Proposal, ProposalContext
from search.node import Node


@dataclass
class GenerationTask:
    operator: Any
    parent: Node | None
    context: ProposalContext

    def __call__(self) -> Proposal:
        return self.operator.propose(self.parent, self.context)[0]


class GenerationPool(Protocol):
    def submit(self, task: GenerationTask) -> Future[Proposal]: ...

    def close(self) -> None: ...


class ThreadGeneration:
    def __init__(self, workers: int) -> None:
        self._threads = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="generate")

    def submit(self, task: GenerationTask) -> Future[Proposal]:
        return self._threads.submit(task)

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)


def _run_task(task: GenerationTask) -> Proposal:
    return task()


class RayGeneration:
    """Each task is a Ray task needing one CPU, so Ray spreads generation over the cluster's CPU workers."""

    def __init__(self) -> None:
        import ray

        self._remote = ray.remote(num_cpus=1, max_retries=3)(_run_task)

    def submit(self, task: GenerationTask) -> Future[Proposal]:
        return self._remote.remote(task).future()

    def close(self) -> None:
        pass
