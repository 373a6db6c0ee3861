"""Choose and open the executor: evaluation pools per target plus a generation pool (docs/architecture.md §9).

``--executor ray`` is the default when Ray is installed: unless a cluster is named (``--ray-address``, else
``RAY_ADDRESS``) a private local Ray instance is started that offers each requested target and stopped at the
end (so the same code path runs on a laptop and on a cluster); a named cluster must already offer
``hw:<target>`` for every target of the run. A cluster merely running on this host is never joined.
``--executor local`` uses sandboxed worker processes on this host and no Ray at all.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from interpreters.pools import PoolSet, local_pools
from kernelevolve import interrupts
from kernelevolve.errors import UserError
from kernelevolve.generation import GenerationPool, RayGeneration, ThreadGeneration

log = structlog.get_logger("kernelevolve.execution")
EXECUTORS = ("local", "ray")


def default_executor() -> str:
    """``KE_EXECUTOR`` if set, else ray when it is installed, else local."""
    chosen = os.environ.get("KE_EXECUTOR")
    if chosen:
        return chosen
    return "ray" if importlib.util.find_spec("ray") is not None else "local"


@dataclass
class Execution:
    kind: str
    pools: PoolSet
    generation: GenerationPool
    address: str | None = None
    _shutdown: Callable[[], None] | None = None

    def close(self) -> None:
        """Pools, then generation, then Ray; each step runs even if one before it fails, so that an interrupted run
        never leaves worker processes or a private Ray cluster behind."""
        try:
            self.pools.close()
        finally:
            try:
                self.generation.close()
            finally:
                if self._shutdown:
                    self._shutdown()


def ray_address_for(kind: str, given: str | None) -> str | None:
    """The Ray cluster a run joins: ``given`` (``--ray-address`` or a campaign's ``ray_address``), else
    ``RAY_ADDRESS``; None (and ``local``) means a private instance. Ray's own default would join any cluster
    running on this host, even a stale one named by /tmp/ray/ray_current_cluster (issue #30)."""
    if kind != "ray":
        return given  # check_executor refuses an address given to the local executor; RAY_ADDRESS is not ours
    chosen = (given or os.environ.get("RAY_ADDRESS") or "").strip()
    return None if chosen in ("", "local") else chosen


def check_executor(kind: str, ray_address: str | None) -> None:
    if kind not in EXECUTORS:
        raise UserError(f"unknown executor '{kind}' (known: {', '.join(EXECUTORS)})")
    if kind == "local" and ray_address:
        raise UserError("--ray-address needs --executor ray")
    if kind == "ray" and importlib.util.find_spec("ray") is None:
        raise UserError("--executor ray needs Ray: pip install 'ray>=2.30' (or use --executor local)")


def open_execution(kind: str, ray_address: str | None, targets: list[str], concurrency: int,
                   scratch: Path) -> Execution:
    """Pools with ``concurrency`` slots per target; joins or starts Ray for the ray executor."""
    interrupts.check()  # a signal deferred during set-up stops the command before any executor starts
    check_executor(kind, ray_address)
    if kind == "local":
        return Execution("local", local_pools(scratch, concurrency), ThreadGeneration(concurrency))
    from interpreters import ray_pool

    # Ray's driver prints worker failures to stdout; stdout belongs to --json, so Ray gets stderr until shutdown.
    stdout, sys.stdout = sys.stdout, sys.stderr

    def shutdown() -> None:
        ray_pool.shutdown()
        sys.stdout = stdout

    try:
        resources = ray_pool.connect(ray_address, {t: concurrency for t in targets})
        ray_pool.require_targets(resources, targets, ray_address)
    except ray_pool.PoolUnavailable as exc:
        shutdown()
        raise UserError(str(exc)) from None
    except ray_pool.JOIN_ERRORS as exc:
        shutdown()
        raise UserError(ray_pool.join_error(ray_address, exc)) from None

    def started(target: str, where: dict[str, Any]) -> None:
        log.info("evaluator_started", target=target, **where)

    def lost(target: str, error: str) -> None:
        log.warning("slot_lost", target=target, error=error, action="retrying on a replacement actor")

    log.info("ray_connected", address=ray_address or "local", targets=ray_pool.offered_targets(resources))
    return Execution("ray", ray_pool.ray_pools(concurrency, started, lost), RayGeneration(), ray_address, shutdown)
