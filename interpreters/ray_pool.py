"""Ray actor pools, one per target (DESIGN §7).

Each evaluation actor asks for one unit of the custom resource ``hw:<target>`` (and one GPU when it runs
kernels on a real NVIDIA or AMD device), so Ray places it only on nodes that offer that target: nodes started
with ``ke worker --hw TARGET``, or the local node that ``ke`` starts itself. Inside, the actor runs the same
sandboxed worker process as the local executor. An actor or node lost mid-evaluation surfaces as
:class:`SlotLost`, and the pool retries the request on a fresh actor, which Ray places on a node still alive.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray import exceptions as ray_errors

from evaluators.result import EvaluationResult
from interpreters.pools import EvaluationRequest, PoolSet, SlotLost, SlotPool, default_scratch
from interpreters.targets import get_target

log = logging.getLogger("interpreters.ray_pool")
RESOURCE_PREFIX = "hw:"
# Ray's ways of saying "the actor, its worker process or its node is gone".
LOST_ERRORS: tuple[type[BaseException], ...] = tuple(
    getattr(ray_errors, name) for name in ("RayActorError", "ActorDiedError", "ActorUnavailableError",
                                           "WorkerCrashedError", "NodeDiedError", "ObjectLostError",
                                           "OwnerDiedError", "GetTimeoutError")
    if hasattr(ray_errors, name))


JOIN_ERRORS: tuple[type[BaseException], ...] = (ConnectionError, RuntimeError, ValueError, ray_errors.RayError)


def join_error(address: str | None, exc: BaseException) -> str:
    """One line on why joining failed; token authentication (Ray's default for new clusters) gets its fix."""
    text = " ".join(str(exc).split())
    if "AuthToken" in text or "Authentication" in type(exc).__name__:
        return (f"the Ray cluster at {address} requires token authentication: set RAY_AUTH_MODE=token and make "
                "the cluster's token available (~/.ray/auth_token, RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH)")
    return f"cannot join the Ray cluster at {address}: {text[:200]}"


class PoolUnavailable(Exception):
    """No node in the cluster offers the target (one-line message with the command that adds one)."""


def resource_name(target: str) -> str:
    return f"{RESOURCE_PREFIX}{target}"


@ray.remote(max_restarts=0, max_task_retries=0)
class EvaluatorActor:
    """Holds one sandboxed evaluation worker on the node Ray placed it on."""

    def __init__(self, target: str, simulate: bool, timeout_s: float) -> None:
        from interpreters.pools import LocalSlot

        self.scratch = default_scratch()
        self.slot = LocalSlot(target, simulate, self.scratch, timeout_s)

    def where(self) -> dict[str, Any]:
        context = ray.get_runtime_context()
        return {"pid": os.getpid(), "ppid": os.getppid(), "node_id": context.get_node_id(),
                "host": socket.gethostname()}

    def evaluate(self, request: EvaluationRequest) -> dict:
        return self.slot.evaluate(request).to_dict()

    def close(self) -> None:
        self.slot.close()


class RaySlot:
    """One actor; any Ray error that means the actor is gone becomes :class:`SlotLost`."""

    def __init__(self, target: str, simulate: bool, timeout_s: float,
                 on_start: Callable[[dict[str, Any]], None] | None = None) -> None:
        options: dict[str, Any] = {"resources": {resource_name(target): 1}, "num_cpus": 0}
        if get_target(target).runs_on_device(simulate):
            options["num_gpus"] = 1
        self.actor = EvaluatorActor.options(**options).remote(target, simulate, timeout_s)
        self.where: dict[str, Any] = {}
        self._on_start = on_start

    def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        # The worker enforces per-phase deadlines; this is the backstop for a wedged or unreachable node.
        deadline = request.timeout_s * 4 + 900
        try:
            if not self.where:
                self.where = ray.get(self.actor.where.remote(), timeout=deadline)
                if self._on_start:
                    self._on_start(self.where)
            return EvaluationResult.from_dict(ray.get(self.actor.evaluate.remote(request), timeout=deadline))
        except LOST_ERRORS as exc:
            raise SlotLost(f"{type(exc).__name__} on {self.where.get('host', '?')}: "
                           f"{' '.join(str(exc).split())[:200]}") from None

    def close(self) -> None:
        try:
            ray.kill(self.actor, no_restart=True)
        except Exception as exc:  # noqa: BLE001 - already dead is fine
            log.debug("ray.kill failed: %s", exc)


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast on an address where no GCS listens: ``ray.init`` would otherwise retry forever."""
    if address == "auto" or "://" in address:
        return  # resolved by Ray itself (a local cluster file, or a client URL)
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {address} ({exc.strerror or exc}); is the Ray head running?") \
            from None


def connect(address: str | None, offer: dict[str, int], namespace: str = "kernelevolve") -> dict[str, float]:
    """Join ``address`` (or start a private local cluster offering ``offer``); returns the cluster resources."""
    if address:
        check_reachable(address)
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        root = str(Path(__file__).resolve().parent.parent)
        runtime_env = {"env_vars": {"PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}}
        if address:
            ray.init(address=address, namespace=namespace, log_to_driver=False, logging_level=logging.WARNING,
                     runtime_env=runtime_env)
        else:
            ray.init(resources={resource_name(t): n for t, n in offer.items()}, namespace=namespace,
                     include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                     runtime_env=runtime_env)
    return ray.cluster_resources()


def offered_targets(resources: dict[str, float]) -> dict[str, int]:
    """target -> slots the cluster offers, from its ``hw:<target>`` resources."""
    return {k[len(RESOURCE_PREFIX):]: int(v) for k, v in resources.items() if k.startswith(RESOURCE_PREFIX)}


def require_targets(resources: dict[str, float], targets: list[str], address: str | None) -> None:
    offered = offered_targets(resources)
    for target in targets:
        if offered.get(target, 0) < 1:
            where = address or "the local Ray cluster"
            raise PoolUnavailable(f"no node in {where} offers {resource_name(target)} (offered: "
                                  f"{', '.join(sorted(offered)) or 'none'}); add one with "
                                  f"'ke worker --hw {target} --ray-address {address or 'ADDR'}'")


def ray_pools(size: int, on_start: Callable[[str, dict[str, Any]], None] | None = None,
              on_lost: Callable[[str, str], None] | None = None) -> PoolSet:
    def make_pool(target: str, simulate: bool) -> SlotPool:
        started = (lambda where: on_start(target, where)) if on_start else None
        return SlotPool(lambda: RaySlot(target, simulate, 120.0, started), size, name=target, on_lost=on_lost)

    return PoolSet(make_pool)


def shutdown() -> None:
    if ray.is_initialized():
        ray.shutdown()
