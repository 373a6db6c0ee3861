"""The one record every layer shares: a node of the search graph.

Kept small (in the spirit of AIDE's ``Node``) and free of I/O so policies can be
unit-tested on synthetic graphs. ``parent_id is None`` means the node was drafted
from the root, i.e. from the PyTorch reference itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BUGGY_STATUSES = frozenset({"incorrect", "compile_error", "runtime_error", "timeout", "crash", "rejected", "pending",
                            "too_large"})
# "pending" never reaches the store: it marks an expansion still in flight (a virtual loss for the policies).
# "too_large" is no verdict on the kernel (the device could not hold the problem: evaluators/admission.py), but
# no usable kernel either; reports and summaries count it apart, and its run stops at it.


@dataclass(frozen=True)
class Node:
    run_id: str
    node_id: int
    parent_id: int | None
    depth: int
    candidate_hash: str
    status: str
    fitness: float
    reason: str = ""
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    path_ref: str = ""
    operator_meta: dict[str, Any] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    eval_seconds: float = 0.0
    created_at: float = 0.0

    @property
    def is_buggy(self) -> bool:
        return self.status in BUGGY_STATUSES
