"""Runs that lost artifacts: finding what is missing, and recovering a node's evaluation from the run database.

Artifacts are written before a node's DuckDB row, so a missing one was lost afterwards (a deleted folder, a
pruned bucket). The row and its per-case records still hold what resume and export need from
``evaluation.json`` (status, fitness, per-case timings), so a lost evaluation is rebuilt from them, with a
warning, instead of making the run impossible to resume or export.
"""

from __future__ import annotations

import sys
from typing import Any

import structlog

from kernelevolve.store import layout
from kernelevolve.store.objects import ArtifactMissing, ObjectStore
from search.node import Node

log = structlog.get_logger("kernelevolve.store")



def warn(message: str) -> None:
    """One line on stderr and in the log: the command goes on with what could be recovered."""
    log.warning("artifact_missing", message=message)
    print(f"ke: warning: {message}", file=sys.stderr, flush=True)


def missing_artifacts(meta: Any, objects: ObjectStore, run_id: str) -> dict[int, list[str]]:
    """node id -> the names of its artifacts (and its kernel's ref) absent from the store; two listings."""
    nodes: list[Node] = meta.nodes(run_id)
    present = set(objects.list(layout.nodes_prefix(run_id)))
    kernels = set(objects.list(layout.KERNELS))
    missing: dict[int, list[str]] = {}
    for node in nodes:
        prefix = layout.node_prefix(run_id, node.node_id)
        lost = [name for name in layout.NODE_ARTIFACTS if prefix + name not in present]
        if node.path_ref and node.path_ref not in kernels:
            lost.append(node.path_ref)
        if lost:
            missing[node.node_id] = lost
    return missing


def node_evaluation(meta: Any, objects: ObjectStore, run: Any, node: Node) -> dict[str, Any]:
    """The node's stored ``evaluation.json``, else one rebuilt from its row and case records (warned)."""
    ref = layout.evaluation_key(run.run_id, node.node_id)
    try:
        return objects.get_json(ref)
    except ArtifactMissing:
        warn(f"{ref} is missing from {objects.url}; node {node.node_id}'s evaluation is rebuilt from the run "
             f"database (per-case timings kept, profiles lost)")
    cases = [{"name": c.case_name, "status": c.status, "latency_ms": c.latency_ms, "eager_ms": c.eager_ms,
              "compile_ms": c.compile_ms, "max_abs_err": c.max_abs_err, "error": c.error}
             for c in meta.cases(run.run_id, node.node_id)]
    return {"status": node.status, "fitness": node.fitness, "reason": node.reason,
            "speedup_vs_eager": node.speedup_vs_eager, "speedup_vs_compile": node.speedup_vs_compile,
            "target": run.hw, "simulated": run.simulated, "cases": cases,
            "extra": {"rebuilt_from": "run database"}}
