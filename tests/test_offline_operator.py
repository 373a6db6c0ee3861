"""The offline operator: finds tunables, rewrites them in place, drafts from samples, never repeats."""

from __future__ import annotations

import random

import pytest

from evaluators.identity import source_hash
from kernelevolve.kb import code_samples, front_matter
from kernelevolve.operators.base import OperatorError, ProposalContext
from kernelevolve.operators.offline import OfflineOperator
from kernelevolve.operators.tunables import find_tunables, neighbours, rewrite
from search.node import Node

SOURCE = '''
BLOCK_SIZE = 1024  # keep this comment
NUM_WARPS = 4
OTHER = 7
def forward():
    kernel[(1,)](x, BLOCK_M=64, num_warps=NUM_WARPS, num_stages=3)
'''


def test_finds_module_constants_and_launch_keywords() -> None:
    found = {t.name: t.value for t in find_tunables(SOURCE)}
    assert found == {"BLOCK_SIZE": 1024, "NUM_WARPS": 4, "BLOCK_M": 64, "num_stages": 3}


def test_rewrite_changes_only_the_literals() -> None:
    tunables = {t.name: t for t in find_tunables(SOURCE)}
    out = rewrite(SOURCE, {tunables["BLOCK_SIZE"]: 2048, tunables["BLOCK_M"]: 32})
    assert "BLOCK_SIZE = 2048  # keep this comment" in out
    assert "BLOCK_M=32, num_warps=NUM_WARPS" in out
    assert out.count("\n") == SOURCE.count("\n")


def test_neighbours_respect_ranges() -> None:
    by_name = {t.name: t for t in find_tunables("NUM_WARPS = 16\nBLOCK = 16\nNUM_STAGES = 1\n")}
    assert neighbours(by_name["NUM_WARPS"]) == [8]
    assert neighbours(by_name["BLOCK"]) == [32]
    assert neighbours(by_name["NUM_STAGES"]) == [2]


def test_kb_samples_have_front_matter_for_builtin_ops() -> None:
    for op in ("swish", "softmax", "conv1d"):
        samples = code_samples(op)
        assert samples, op
        assert all(front_matter(s.source)["op"] == op for s in samples)


def _ctx(seen: set[str], draft_index: int = 0, parent_source: str | None = None) -> ProposalContext:
    return ProposalContext(op="swish", target="cpu", rng=random.Random(1), parent_source=parent_source,
                           seen_hashes=seen, draft_index=draft_index)


def test_first_draft_is_the_seed_then_unseen_variants() -> None:
    operator = OfflineOperator()
    seed = code_samples("swish")[0].source
    first = operator.propose(None, _ctx(set()))[0]
    assert first.source == seed and first.meta["kind"] == "draft"
    second = operator.propose(None, _ctx({source_hash(seed)}, draft_index=1))[0]
    assert second.source != seed and source_hash(second.source) != source_hash(seed)


def test_mutation_never_repeats_a_seen_source() -> None:
    operator = OfflineOperator()
    seed = code_samples("swish")[0].source
    parent = Node("r", 1, None, 1, source_hash(seed), "ok", 1.0)
    seen = {source_hash(seed)}
    for _ in range(40):  # more than the one-step neighbourhood holds
        child = operator.propose(parent, _ctx(seen, parent_source=seed))[0]
        digest = source_hash(child.source)
        assert digest not in seen
        seen.add(digest)


def test_op_without_samples_is_a_clear_error() -> None:
    ctx = ProposalContext(op="no_such_op", target="cpu", rng=random.Random(0))
    with pytest.raises(OperatorError, match="no seed kernel for op 'no_such_op'"):
        OfflineOperator().propose(None, ctx)
