"""The object store's layout: the one module that spells its keys (issue #32).

Why one place: the report, ``ke best``, recovery, the sweep matrix and the runner all read what the runner
wrote; a key spelled in each of them drifts. Every key is relative to the store's root (a folder or an S3
prefix). Kernels and specs are content-addressed, so identical sources share one object across runs.

    specs/<spec sha256>.py                      the exact spec a run used
    kernels/<source sha256>.py                  every candidate's source
    runs/<run>/nodes/<node, 6 digits>/          a node's artifacts: evaluation.json, operator.json, and what
                                                its operator kept (prompt.json, response.md, overview.md)
    runs/<run>/final.json                       the run's re-measurement of its best node
    runs/<run>/final_node_<node>.json           ... of another per-case winner
"""

from __future__ import annotations

KERNELS = "kernels/"
EVALUATION = "evaluation.json"  # written for every node (run_records.persist_node)
OPERATOR = "operator.json"
OVERVIEW = "overview.md"  # the search's state when the node was written, for a context-memory operator
NODE_ARTIFACTS = (EVALUATION, OPERATOR)


def spec_key(spec_hash: str) -> str:
    return f"specs/{spec_hash}.py"


def kernel_key(source_hash: str) -> str:
    return f"{KERNELS}{source_hash}.py"


def nodes_prefix(run_id: str) -> str:
    return f"runs/{run_id}/nodes/"


def node_prefix(run_id: str, node_id: int) -> str:
    """Where a node's artifacts live; zero-padded so listings sort in node order."""
    return f"{nodes_prefix(run_id)}{node_id:06d}/"


def evaluation_key(run_id: str, node_id: int) -> str:
    return node_prefix(run_id, node_id) + EVALUATION


def operator_key(run_id: str, node_id: int) -> str:
    return node_prefix(run_id, node_id) + OPERATOR


def final_key(run_id: str, node_id: int, best: bool) -> str:
    """Where a run's fresh re-measurement of a node lives: ``final.json`` for the overall best (the name
    older runs used), ``final_node_<id>.json`` for the other per-case winners."""
    return f"runs/{run_id}/final.json" if best else f"runs/{run_id}/final_node_{node_id}.json"
