"""The offline operator: finds tunables, rewrites them in place, drafts from samples, never repeats."""

from __future__ import annotations

import random

import pytest

from evaluators.identity import source_hash
from kernelevolve.knowledge.samples import code_samples, front_matter
from kernelevolve.operators.base import OperatorError, ProposalContext
from kernelevolve.operators.offline import OfflineOperator
from kernelevolve.operators.structural import apply, structural_variants
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


STRUCTURED = '''import triton
import triton.language as tl


@triton.jit
def k(x, y):
    a = tl.load(x, eviction_policy="evict_first", mask=None)
    b = tl.load(x,
                mask=None,
                eviction_policy="evict_last",
                )
    c = 1.0 / tl.sqrt(tl.exp(a - b))
    tl.store(y, c, cache_modifier=".cs")


def not_a_kernel(x):
    return tl.exp(x)  # outside @triton.jit: never rewritten
'''


def test_structural_variants_rewrite_only_kernel_code_in_place() -> None:
    variants = {v.description: apply(STRUCTURED, v) for v in structural_variants(STRUCTURED)}
    assert "a = tl.load(x, mask=None)" in variants["tl.load at line 7: no eviction_policy"]
    assert 'mask=None,\n                )' in variants["tl.load at line 8: no eviction_policy"]
    assert "c = tl.rsqrt(tl.exp(a - b))" in variants["1 / tl.sqrt as tl.rsqrt at line 12"]
    assert "tl.exp2((a - b) * 1.4426950408889634)" in variants["tl.exp as tl.exp2 at line 12"]
    assert 'cache_modifier=".wb"' in variants["tl.store at line 13: cache_modifier='.wb'"]
    assert all("return tl.exp(x)" in v for v in variants.values())
    assert len(variants) == 8  # per load: the other policy or none; rsqrt; exp2; store: .wb or none
    for text in variants.values():
        compile(text, "variant.py", "exec")


def test_every_sample_has_structural_variants_that_pass_static_checks() -> None:
    from evaluators.static_checks import check_source
    from kernelevolve.builtin_specs import builtin_ops

    samples = [s for op in builtin_ops() for s in code_samples(op)]
    assert len(samples) >= 12
    for sample in samples:
        variants = structural_variants(sample.source)
        assert variants, sample.path.name
        for variant in variants:
            assert check_source(apply(sample.source, variant)) == [], (sample.path.name, variant.description)


def test_exhausted_tunables_fall_back_to_structural_variants() -> None:
    seed = code_samples("swish")[0].source
    frozen = rewrite(seed, {t: t.value for t in find_tunables(seed)})
    # a kernel with no tunables left to move: every module constant renamed away
    for t in find_tunables(frozen):
        frozen = frozen.replace(f"{t.name} =", f"FIXED_{t.name.lower()} =").replace(t.name, f"FIXED_{t.name.lower()}")
    assert not [t for t in find_tunables(frozen) if neighbours(t)]
    parent = Node("r", 1, None, 1, source_hash(frozen), "ok", 1.0)
    child = OfflineOperator().propose(parent, _ctx({source_hash(frozen)}, parent_source=frozen))[0]
    assert child.meta["kind"] == "structural" and child.source != frozen


def test_structural_variants_of_softmax_stay_correct_on_the_interpreter(tmp_path) -> None:
    """All rewrites at once (exp2, cache hints) still pass the real evaluation: they keep the kernel's meaning."""
    from pathlib import Path

    from interpreters.executor import LocalExecutor
    from interpreters.targets import get_target
    from kernelevolve.builtin_specs import resolve_op

    source = next(s for s in code_samples("softmax") if s.path.name == "softmax.py").source
    seen_sites: set[str] = set()
    for variant in structural_variants(source):
        site = variant.description.split(":")[0]
        seen_sites.add(site)
    combined = source
    for site in sorted(seen_sites):  # one rewrite per site, each found afresh in the rewritten text
        variant = next(v for v in structural_variants(combined) if v.description.startswith(site))
        combined = apply(combined, variant)
    assert "tl.exp2(" in combined and "eviction_policy=" in combined and "cache_modifier=" in combined
    executor = LocalExecutor(get_target("cpu"), Path(tmp_path) / "scratch", timeout_s=120.0)
    try:
        result = executor.evaluate(resolve_op("softmax"), combined)
    finally:
        executor.close()
    assert result.status == "ok", result.reason


DOT_SOURCE = '''
MM0_BLOCK_M = 128
MM0_BLOCK_N = 128
MM0_BLOCK_K = 64
MM0_STAGES = 3
def forward():
    kernel[(1,)](x, BLOCK_M=MM0_BLOCK_M, BLOCK_N=MM0_BLOCK_N, BLOCK_K=MM0_BLOCK_K, num_stages=MM0_STAGES)
'''


def test_gpu_mutations_never_overflow_shared_memory_but_cpu_ones_may() -> None:
    """128 x 128 x 64 at 3 stages (192 KiB) fits an H100's 227 KiB; doubling BLOCK_N or BLOCK_M, or a 4th
    stage, does not: on a GPU target those children are never proposed, on the cpu target they are."""
    from kernelevolve.operators.tunables import fits_shared_memory

    assert fits_shared_memory({"MM0_BLOCK_M": 128, "MM0_BLOCK_N": 128, "MM0_BLOCK_K": 64, "MM0_STAGES": 3})
    assert not fits_shared_memory({"MM0_BLOCK_M": 128, "MM0_BLOCK_N": 256, "MM0_BLOCK_K": 64})
    parent = Node("r", 1, None, 1, source_hash(DOT_SOURCE), "ok", 1.0)
    grown = {}
    for target in ("h100", "cpu"):
        seen, operator, big = {source_hash(DOT_SOURCE)}, OfflineOperator(), 0
        for i in range(60):
            ctx = ProposalContext(op="mm", target=target, rng=random.Random(i), parent_source=DOT_SOURCE,
                                  seen_hashes=seen)
            child = operator.propose(parent, ctx)[0]
            seen.add(source_hash(child.source))
            values = {t.name: t.value for t in find_tunables(child.source)}
            big += not fits_shared_memory(values)
        grown[target] = big
    assert grown["h100"] == 0 and grown["cpu"] > 0
