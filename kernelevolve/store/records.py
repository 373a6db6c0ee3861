"""Rows of the metadata store that are not search-graph nodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunRecord:
    run_id: str
    op: str
    op_path: str
    spec_hash: str
    hw: str
    strategy: str
    operator: str
    budget: int
    seed: int
    status: str = "running"  # running | completed | failed | interrupted
    simulated: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    best_node_id: int | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class CaseRecord:
    """One input case of one node's evaluation."""

    run_id: str
    node_id: int
    case_name: str
    status: str
    latency_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    max_abs_err: float | None = None
    error: str = ""
