"""Which evaluation counts for a node: one rule for the report, the exports and the sweep matrices.

A run that finished re-measured its winners in fresh evaluations (``run_records.finish_run``): search-time numbers
carry selection bias, the maximum of noisy samples. So a node's authoritative evaluation is that
re-measurement where the run made one of it and it passed, else the node's own evaluation from the search,
rebuilt from the run database if its artifact was lost. Before this module, three copies of the rule
(report, export, ATen matrix) each handled a damaged or missing artifact differently.
"""

from __future__ import annotations

from typing import Any

from kernelevolve.store import layout
from kernelevolve.store.objects import ObjectStore, StoreError
from kernelevolve.store.recovery import node_evaluation, warn
from search.node import Node

FINAL = "final"  # the run's fresh re-measurement of the node
SEARCH = "search"  # the node's evaluation during the search


def final_evaluation(objects: ObjectStore, run_id: str, node_id: int, best: bool) -> dict[str, Any] | None:
    """The run's passing re-measurement of this node, or None (none made, another node's, failed, unreadable)."""
    ref = layout.final_key(run_id, node_id, best)
    try:
        final = objects.get_json(ref) if objects.exists(ref) else None
    except StoreError as exc:
        warn(f"{ref} cannot be read ({exc}); node {node_id}'s search-time evaluation is used instead")
        return None
    if final and final.get("node_id") == node_id and final.get("status") == "ok":
        return final
    return None


def authoritative_evaluation(meta: Any, objects: ObjectStore, run: Any, node: Node, best: bool,
                             fallback: bool = True) -> tuple[dict[str, Any] | None, str]:
    """(evaluation, ``FINAL`` or ``SEARCH``) for ``node`` of ``run``; ``best``: the node is the run's overall
    best (its re-measurement is ``final.json``). ``fallback`` False: (None, "") where there is no
    re-measurement, for callers that use only re-measured nodes."""
    final = final_evaluation(objects, run.run_id, node.node_id, best)
    if final is not None:
        return final, FINAL
    if not fallback:
        return None, ""
    return node_evaluation(meta, objects, run, node), SEARCH
