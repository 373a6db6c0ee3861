"""Assertions about a stored run that several test files share."""

from __future__ import annotations

import json
from pathlib import Path

from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore


def assert_store_consistent(state: Path, store_url: str, run_id: str, expected: int) -> None:
    """Every node DuckDB knows has its kernel and evaluation in the object store; ids are 1..n once."""
    meta, objects = MetadataStore(state / "ke.duckdb"), ObjectStore(store_url)
    nodes = meta.nodes(run_id)
    assert [n.node_id for n in nodes] == list(range(1, expected + 1))
    ids = {n.node_id for n in nodes}
    for n in nodes:
        assert n.parent_id is None or n.parent_id in ids
        assert n.parent_id is None or n.parent_id < n.node_id
        assert objects.exists(n.path_ref), n.path_ref
        assert objects.exists(ObjectStore.node_prefix(run_id, n.node_id) + "evaluation.json")
    assert len({n.candidate_hash for n in nodes}) == expected, "a candidate was evaluated twice in one run"


def node_evaluations(state: Path) -> list[dict]:
    """Every node's stored ``evaluation.json`` under a folder store's ``state`` directory."""
    return [json.loads(p.read_text()) for p in (state / "artifacts" / "runs").glob("*/nodes/*/evaluation.json")]
