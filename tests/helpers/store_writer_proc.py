"""Insert nodes into a metadata store one by one, as a search process would (used by the tests).

Usage: python tests/helpers/store_writer_proc.py DB RUN_ID N

Each node goes through its own ``add_node`` call (own connection, own transaction), so a test can
run this as a real second process and check that readers and other writers get their turn.
Exits 0 and prints ``done RUN_ID N`` once all N nodes are stored.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kernelevolve.store.metadata import MetadataStore  # noqa: E402
from kernelevolve.store.records import CaseRecord, RunRecord  # noqa: E402
from search.node import Node  # noqa: E402


def main(db: str, run_id: str, n: int) -> None:
    store = MetadataStore(db)
    if store.get_run(run_id) is None:
        store.create_run(RunRecord(run_id=run_id, op="softmax", op_path="", spec_hash="s", hw="cpu",
                                   strategy="greedy", operator="offline", budget=n, seed=0))
    rng = random.Random(run_id)
    first = store.next_node_id(run_id)
    depths: dict[int, int] = {}
    for node_id in range(first, first + n):
        parent = rng.choice([None, *depths]) if depths else None
        depths[node_id] = 1 if parent is None else depths[parent] + 1
        status = rng.choice(["ok", "ok", "ok", "incorrect", "compile_error"])
        fitness = rng.uniform(0.5, 3.0) if status == "ok" else 0.0
        node = Node(run_id=run_id, node_id=node_id, parent_id=parent, depth=depths[node_id],
                    candidate_hash=f"{run_id}-{node_id}", status=status, fitness=fitness,
                    operator_meta={"writer": run_id, "i": node_id})
        cases = [CaseRecord(run_id, node_id, name, status, latency_ms=1.0) for name in ("small", "large")]
        store.add_node(node, cases)
    print(f"done {run_id} {n}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
