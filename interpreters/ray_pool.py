"""Ray actor pools, one per target (docs/architecture.md §9).

Each evaluation actor asks for one unit of the custom resource ``hw:<target>`` (and a GPU share when it runs
kernels on a real NVIDIA or AMD device), so Ray places it only on nodes that offer that target: nodes started
with ``ke worker --hw TARGET``, or the local node that ``ke`` starts itself. A pool with more actors than
the GPUs of those nodes gives each actor an equal fraction of a GPU, as the local executor shares a GPU
among its slots: the actors overlap compilation and correctness checks, and their timed loops take the
physical device's lock (:mod:`evaluators.device_lock`), so timings never overlap. Inside, the actor runs the same
sandboxed worker process as the local executor. An actor or node lost mid-evaluation surfaces as
:class:`SlotLost`, and the pool retries the request on a fresh actor, which Ray places on a node still alive.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray import exceptions as ray_errors
from ray._private import auto_init_hook

from evaluators.result import EvaluationResult
from interpreters import ray_watchdog
from interpreters.pools import EvaluationRequest, PoolSet, SlotLost, SlotPool, default_scratch
from interpreters.spec_shelf import shelve_received, text_of
from interpreters.targets import get_target

log = logging.getLogger("interpreters.ray_pool")
# Never start Ray implicitly: a pool thread that creates an actor after ``ray.shutdown`` (an interrupt racing a
# retry) would otherwise start a second, resource-less local instance and wait on it forever (issue #30).
auto_init_hook.enable_auto_connect = False
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


def placement() -> dict[str, Any]:
    """Where the calling actor runs: process, node, host, the GPUs Ray gave it and the timing lock they map to."""
    from evaluators.device_lock import lock_path

    gpus = [str(g) for g in ray.get_gpu_ids()]
    return {"pid": os.getpid(), "ppid": os.getppid(), "node_id": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(), "gpus": gpus, "timing_lock": str(lock_path(0)) if gpus else None}


def actor_options(target: str, simulate: bool, gpu_share: float) -> dict[str, Any]:
    """Ray placement of one evaluation actor: a ``hw:<target>`` slot, and a GPU share for device targets."""
    options: dict[str, Any] = {"resources": {resource_name(target): 1}, "num_cpus": 0}
    if get_target(target).runs_on_device(simulate):
        options["num_gpus"] = gpu_share
    return options


@ray.remote(max_restarts=0, max_task_retries=0)
class EvaluatorActor:
    """Holds one sandboxed evaluation worker on the node Ray placed it on."""

    def __init__(self, target: str, simulate: bool, timeout_s: float) -> None:
        from interpreters.pools import LocalSlot

        self.scratch = default_scratch()
        self.slot = LocalSlot(target, simulate, self.scratch, timeout_s)

    def where(self) -> dict[str, Any]:
        return placement()

    def evaluate(self, request: EvaluationRequest, spec_text: str | None = None) -> dict:
        """``spec_text`` comes with the first request of each spec this actor sees (:class:`RaySlot`)."""
        if spec_text is not None:
            shelve_received(request.spec, spec_text)
        return self.slot.evaluate(request).to_dict()

    def close(self) -> None:
        self.slot.close()


class RaySlot:
    """One actor; any Ray error that means the actor is gone becomes :class:`SlotLost`."""

    def __init__(self, target: str, simulate: bool, timeout_s: float,
                 on_start: Callable[[dict[str, Any]], None] | None = None, gpu_share: float = 1.0) -> None:
        self.actor = EvaluatorActor.options(**actor_options(target, simulate, gpu_share)).remote(
            target, simulate, timeout_s)
        self.where: dict[str, Any] = {}
        self._on_start = on_start
        self._sent: set[str] = set()  # hashes of the specs this actor has been sent

    def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        # The worker enforces per-phase deadlines; this is the backstop for a wedged or unreachable node.
        deadline = request.timeout_s * 4 + 900
        try:
            if not self.where:
                self.where = ray.get(self.actor.where.remote(), timeout=deadline)
                if self._on_start:
                    self._on_start(self.where)
            text = None if request.spec.hash in self._sent else text_of(request.spec)
            answer = ray.get(self.actor.evaluate.remote(request, text), timeout=deadline)
            self._sent.add(request.spec.hash)
            return EvaluationResult.from_dict(answer)
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


PRIVATE = "local"  # Ray's word for "start a new local instance": never a cluster found on this host


def private_environment() -> None:
    """Settings for the private instance, made before ``ray.init``: the token-authentication notice Ray logs
    for every new local instance is not ``ke``'s to print (the instance is ``ke``'s own and stops with it)."""
    logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)


def connect(address: str | None, offer: dict[str, int], namespace: str = "kernelevolve") -> dict[str, float]:
    """Join ``address`` (or start a private local instance offering ``offer``); returns the cluster resources."""
    if address:
        check_reachable(address)
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        root = str(Path(__file__).resolve().parent.parent)
        runtime_env = {"env_vars": {"PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}}
        handlers = _signal_handlers()
        try:
            if address:
                ray.init(address=address, namespace=namespace, log_to_driver=False, logging_level=logging.WARNING,
                         runtime_env=runtime_env)
            else:
                private_environment()
                ray.init(address=PRIVATE, resources={resource_name(t): n for t, n in offer.items()},
                         namespace=namespace, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING, runtime_env=runtime_env)
                ray_watchdog.watch()
        finally:
            _restore_signal_handlers(handlers)
    return ray.cluster_resources()


def _signal_handlers() -> dict[int, Any]:
    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(handlers: dict[int, Any]) -> None:
    """``ray.init`` sets SIGTERM to exit the process at once; the caller's handler (``ke`` turns SIGTERM into an
    interrupt, so that runs are marked and pools closed) must stay in charge."""
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may set handlers (and ray.init sets none elsewhere)
    for signum, handler in handlers.items():
        if handler is not None and signal.getsignal(signum) is not handler:
            signal.signal(signum, handler)


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


def gpu_share(target: str, size: int) -> float:
    """Each actor's GPU share: ``size`` actors over the GPUs of the live nodes offering ``target``, whole GPUs
    while there are enough. 1/k (not GPUs/size) so that k actors fit on every GPU: Ray places a fractional
    actor on one GPU, and 2 GPUs at 2/3 each would leave the third actor pending forever."""
    gpus = sum(node["Resources"].get("GPU", 0) for node in ray.nodes()
               if node.get("Alive") and node["Resources"].get(resource_name(target), 0) > 0)
    if gpus < 1 or size <= gpus:
        return 1.0
    per_gpu = math.ceil(size / int(gpus))
    return math.floor(10_000 / per_gpu) / 10_000  # Ray keeps four decimals; never round a share up


def ray_pools(size: int, on_start: Callable[[str, dict[str, Any]], None] | None = None,
              on_lost: Callable[[str, str], None] | None = None) -> PoolSet:
    def make_pool(target: str, simulate: bool) -> SlotPool:
        started = (lambda where: on_start(target, where)) if on_start else None
        share = gpu_share(target, size) if get_target(target).runs_on_device(simulate) else 1.0
        return SlotPool(lambda: RaySlot(target, simulate, 120.0, started, share), size, name=target,
                        on_lost=on_lost, shared_device=share < 1.0)

    return PoolSet(make_pool)


def shutdown() -> None:
    try:
        if ray.is_initialized():
            ray.shutdown()
    finally:
        ray_watchdog.release()
