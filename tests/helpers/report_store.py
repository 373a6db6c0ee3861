"""A GPU-like run written through the project's own store API (create_run, persist_node), with the numbers a
real H100 run stores: per-case medians and IQRs, eager and torch.compile baselines, floors, LLM tokens and cost.

This machine has no GPU, so this is how the report's timed views are exercised; the numbers are shaped like
the committed H200 case studies, and the kernels are the real softmax knowledge-base sample.
"""

from __future__ import annotations

import random
from pathlib import Path

from conftest import REPO_ROOT

from evaluators.identity import source_hash
from evaluators.result import CaseResult, EvaluationResult
from kernelevolve.operators.base import Proposal
from kernelevolve.run_records import SearchConfig, create_run, persist_node
from kernelevolve.store.layout import final_key
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore

SPEC = Path(REPO_ROOT) / "kernelevolve" / "builtin_specs" / "softmax.py"
SAMPLE = Path(REPO_ROOT) / "knowledge_base" / "code_samples"
CASES = [("4096x4096_fp32", 0.301, 0.268, 0.134), ("8192x1024_bf16", 0.0912, 0.0845, 0.0335),
         ("32x50257_fp32", 0.0741, 0.0533, 0.0129)]
# (parent index or None, status): 3 drafts, then expansions; three failures of different kinds
PLAN = [(None, "ok"), (None, "compile_error"), (None, "ok"), (1, "ok"), (3, "ok"), (3, "incorrect"),
        (4, "ok"), (1, "ok"), (7, "runtime_error"), (5, "ok"), (7, "ok")]
HOSTILE_REASON = "max error 3.1e-2 on </script><script>window.keHacked = 1</script> case"


def _kernel_source(i: int) -> str:
    base = next(iter(sorted(SAMPLE.glob("softmax*.py")))).read_text(encoding="utf-8")
    return base + f"\n# variant {i}: BLOCK_SIZE = {64 << (i % 5)}\n"


def _timed(rng: random.Random, quality: float) -> EvaluationResult:
    cases = []
    for name, eager, compile_ms, floor in CASES:
        latency = max(floor * 1.05, compile_ms / quality * rng.uniform(0.92, 1.08))
        cases.append(CaseResult(name=name, latency_ms=latency, latency_iqr_ms=latency * rng.uniform(0.005, 0.04),
                                eager_ms=eager, compile_ms=compile_ms, floor_ms=floor,
                                fraction_of_floor=floor / latency, bottleneck="memory"))
    cases.append(CaseResult(name="7x13_small", max_abs_err=1e-7))  # a correctness-only case: no timings
    timed = [c for c in cases if c.latency_ms]
    geo = lambda xs: __import__("math").prod(xs) ** (1 / len(xs))  # noqa: E731
    vs_eager = geo([c.eager_ms / c.latency_ms for c in timed])
    vs_compile = geo([c.compile_ms / c.latency_ms for c in timed])
    return EvaluationResult(status="ok", fitness=vs_compile, target="h100", timed=True, cases=cases,
                            speedup_vs_eager=vs_eager, speedup_vs_compile=vs_compile, eval_seconds=4.2,
                            extra={"gpu": {"name": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "triton": "3.6.0"}})


def write_gpu_like_run(state: Path, nodes: int | None = None, finish: bool = True) -> str:
    """The first ``nodes`` of PLAN as a run in ``state``; ``finish`` marks it completed with a final.json."""
    meta = MetadataStore(state / "ke.duckdb")
    objects = ObjectStore(str(state / "artifacts"))
    cfg = SearchConfig(op="softmax", spec_path=str(SPEC), hw="h100", strategy="greedy", budget=len(PLAN),
                       operator="anthropic", model="claude-sonnet-4-5")
    run = create_run(meta, objects, cfg, SPEC.read_text(encoding="utf-8"))
    rng = random.Random(0)
    stored = []
    for i, (parent, status) in enumerate(PLAN[:nodes], start=1):
        source = _kernel_source(i)
        if status == "ok":
            result = _timed(rng, quality=0.8 + 0.12 * i)
        else:
            reason = HOSTILE_REASON if status == "incorrect" else f"{status}: triton failed on variant {i}"
            result = EvaluationResult.failure(status, reason, target="h100", eval_seconds=1.0)
        proposal = Proposal(source, {"changes": f"variant {i}"}, tokens_in=9000 + 700 * i, tokens_out=1200 + 90 * i,
                            cost_usd=0.045 + 0.004 * i, artifacts={"prompt.md": f"prompt {i}", "response.md": "ok"})
        parent_node = stored[parent - 1] if parent else None
        stored.append(persist_node(meta, objects, run, "anthropic", i, parent_node, proposal, source_hash(source),
                                   result, overview=lambda n: f"# node {n.node_id}\n\nstatus {n.status}\n"))
    if finish:
        best = meta.best_nodes(run.run_id, 1)[0]
        final = _timed(random.Random(1), quality=0.8 + 0.12 * best.node_id)
        objects.put_json(final_key(run.run_id, best.node_id, True), {"node_id": best.node_id, **final.to_dict()})
        meta.update_run(run.run_id, status="completed", best_node_id=best.node_id)
    return run.run_id


def add_remaining_nodes(state: Path, run_id: str, start: int) -> None:
    """Continue a run written with ``nodes=start`` (a search still going): the rest of PLAN."""
    meta = MetadataStore(state / "ke.duckdb")
    objects = ObjectStore(str(state / "artifacts"))
    run = meta.get_run(run_id)
    rng = random.Random(2)
    for i, (parent, status) in enumerate(PLAN[start:], start=start + 1):
        source = _kernel_source(i)
        result = _timed(rng, 1.0) if status == "ok" else EvaluationResult.failure(status, "failed", target="h100")
        parent_node = meta.get_node(run_id, parent) if parent else None
        persist_node(meta, objects, run, "anthropic", i, parent_node, Proposal(source, {}), source_hash(source),
                     result)
