"""Everything a run report shows, read from the store in one pass: the run, its nodes and their artifacts.

Only reads, through the stores' short-lived sessions, so it works while a search writes. A missing artifact
(a node persisted by an older version, a half-copied store) becomes a note in the page, not a failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kernelevolve.store import layout
from kernelevolve.store.evaluations import FINAL, SEARCH, authoritative_evaluation
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore, StoreError
from kernelevolve.store.records import RunRecord
from search.node import Node

_EXTRA_LIMIT = 4000  # characters of an evaluation's ``extra`` kept in the page (the simulator's trace is large)


@dataclass
class NodeDetail:
    """What the side panel shows for one node."""

    code: str = ""
    evaluation: dict[str, Any] | None = None
    overview: str = ""
    operator: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


@dataclass
class RunData:
    run: RunRecord
    nodes: list[Node]
    details: dict[int, NodeDetail]
    best: Node | None
    best_evaluation: dict[str, Any] | None  # the best node's per-case timings
    best_evaluation_source: str = ""  # "final re-measurement" | "search-time evaluation"

    @property
    def draft_count(self) -> int:
        """Nodes before the first expansion of a stored node: the draft phase of the paper's trajectory."""
        for index, node in enumerate(self.nodes):
            if node.parent_id is not None:
                return index
        return len(self.nodes)

    @property
    def has_llm_usage(self) -> bool:
        return any(n.tokens_in or n.tokens_out or n.cost_usd for n in self.nodes)


def _try(objects: ObjectStore, ref: str, reader: str, missing: list[str], label: str) -> Any:
    try:
        return getattr(objects, reader)(ref)
    except StoreError:
        missing.append(label)
        return None


def trim_evaluation(evaluation: dict[str, Any] | None) -> dict[str, Any] | None:
    """The evaluation as stored, minus a bulky ``extra`` (kept as a size note) so the page stays small."""
    if not evaluation:
        return evaluation
    extra = evaluation.get("extra") or {}
    kept: dict[str, Any] = {}
    for key, value in extra.items():
        text = json.dumps(value, default=str)
        kept[key] = value if len(text) <= _EXTRA_LIMIT else f"(omitted from the report: {len(text)} characters)"
    return {**evaluation, "extra": kept}


def node_detail(objects: ObjectStore, node: Node, code_cache: dict[str, str]) -> NodeDetail:
    detail = NodeDetail()
    prefix = layout.node_prefix(node.run_id, node.node_id)
    if node.path_ref:
        if node.path_ref not in code_cache:
            code_cache[node.path_ref] = _try(objects, node.path_ref, "get_text", detail.missing, "code") or ""
        detail.code = code_cache[node.path_ref]
    detail.evaluation = trim_evaluation(_try(objects, prefix + layout.EVALUATION, "get_json", detail.missing,
                                             layout.EVALUATION))
    detail.operator = _try(objects, prefix + layout.OPERATOR, "get_json", detail.missing, layout.OPERATOR) or {}
    if _try(objects, prefix + layout.OVERVIEW, "exists", detail.missing, layout.OVERVIEW):  # older nodes have none
        detail.overview = _try(objects, prefix + layout.OVERVIEW, "get_text", detail.missing, layout.OVERVIEW) or ""
    return detail


SOURCE_LABELS = {FINAL: "final re-measurement", SEARCH: "search-time evaluation"}


def best_evaluation(meta: MetadataStore, objects: ObjectStore, run: Any,
                    node: Node) -> tuple[dict[str, Any] | None, str]:
    """The best node's authoritative evaluation (``store.evaluations``) and where it comes from, in words."""
    try:
        evaluation, source = authoritative_evaluation(meta, objects, run, node, best=True)
    except StoreError:
        return None, ""
    return evaluation, SOURCE_LABELS[source]


def load_run(meta: MetadataStore, objects: ObjectStore, run_id: str, with_details: bool = True) -> RunData:
    run = meta.get_run(run_id)
    if run is None:
        raise LookupError(f"no run {run_id!r}")
    nodes = meta.nodes(run_id)
    code_cache: dict[str, str] = {}
    details = {n.node_id: node_detail(objects, n, code_cache) for n in nodes} if with_details else {}
    best_list = meta.best_nodes(run_id, 1)
    best = best_list[0] if best_list else None
    evaluation, source = best_evaluation(meta, objects, run, best) if best else (None, "")
    return RunData(run, nodes, details, best, evaluation, source)
