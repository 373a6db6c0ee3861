"""``ke aten-sweep`` as a campaign: one search run per suite op on one target, resumable, in the run store.

Why runs in the ordinary store rather than a separate results file: the sweep then gets everything a search
has for free (DuckDB metadata, artifacts in the object store, Ray pools, per-node crash isolation, resume
after a kill, ``ke show``/``ke best`` on any op) and the coverage matrix is a *view* of the store, rebuilt
at the end of every invocation. The campaign is named ``aten-sweep@<target>`` and each op is a slot (its
index in the suite), so running the command again skips ops already done, resumes interrupted ones and
creates the rest; a subset (``--ops``) touches only its slots.

Each op's spec is rendered from the suite table into ``<state>/aten/specs/<slug>.py``. A completed run is
reused only if its spec is byte-identical to today's rendering, the lowering that drafts its starting
candidate (``kernelevolve.lowering``, one draft per input structure) is the same code, its strategy matches
and its budget is at least the one asked for; otherwise a fresh run is created and the old one stays in the
store. Checking the lowering matters as much as the spec: a fixed lowering must not be hidden behind the
failing run it would replace.
"""

from __future__ import annotations

import fnmatch
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from evaluators.identity import source_hash
from evaluators.job import DEFAULT_SEEDS
from kernelevolve.aten.op import AtenOp
from kernelevolve.aten.spec_render import render_spec
from kernelevolve.aten.table import SUITE
from kernelevolve.errors import UserError
from kernelevolve.run_records import SearchConfig, check_resumable, create_run
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore
from kernelevolve.store.records import RunRecord

CAMPAIGN_PREFIX = "aten-sweep@"
RUN_OP_PREFIX = "aten."  # run.op of a sweep run: "aten.<overload>", e.g. aten.abs.default


@dataclass(frozen=True)
class SweepOptions:
    hw: str
    budget: int = 1
    strategy: str = "greedy"
    simulate: bool = False
    timeout_s: float = 120.0
    concurrency: int = 1
    executor: str = "local"
    operator: str = "offline"
    model: str | None = None
    check_seeds: int | None = None  # correctness seeds per evaluation (None: the evaluator's default, 3)

    @property
    def campaign_name(self) -> str:
        """One campaign per target (simulated or not) and operator: their results are not interchangeable."""
        suffix = ("+sim" if self.simulate else "") + ("" if self.operator == "offline" else f"+{self.operator}")
        return f"{CAMPAIGN_PREFIX}{self.hw}{suffix}"


def select_ops(patterns: str | None) -> list[AtenOp]:
    """Suite ops matching any comma-separated glob (against ``abs.default`` or its slug ``abs_default``), in
    suite order; every glob must match something, so a typo is an error instead of a silently smaller sweep."""
    if not patterns:
        return list(SUITE)
    globs = [g.strip() for g in patterns.split(",") if g.strip()]
    if not globs:
        raise UserError(f"--ops {patterns!r} names no pattern")
    for g in globs:
        if not any(fnmatch.fnmatchcase(op.name, g) or fnmatch.fnmatchcase(op.slug, g) for op in SUITE):
            raise UserError(f"--ops: no suite op matches '{g}' (names look like 'abs.default', 'add.Tensor'; "
                            "globs such as 'log*' or '*_backward*' work)")
    return [op for op in SUITE if any(fnmatch.fnmatchcase(op.name, g) or fnmatch.fnmatchcase(op.slug, g)
                                      for g in globs)]


def slot_of(op: AtenOp) -> int:
    return next(i for i, o in enumerate(SUITE) if o.name == op.name)


def seed_identity(hw: str) -> str:
    """What a run's starting draft depends on besides its spec: the lowering's code and the target it lowers
    for (``lowering_version``). A completed run is reused only while both are unchanged."""
    from kernelevolve.lowering import lowering_version

    return source_hash(f"lowering {lowering_version()} per structure for {hw}")


def materialize_spec(op: AtenOp, folder: Path) -> tuple[Path, str]:
    """Write the op's rendered spec (only when it changed, so the file's identity is stable)."""
    text = render_spec(op)
    path = folder / f"{op.slug}.py"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path, text


def open_campaign(meta: MetadataStore, opts: SweepOptions) -> str:
    found = meta.campaign_by_name(opts.campaign_name)
    if found is not None:
        return found["campaign_id"]
    campaign_id = uuid.uuid4().hex[:8]
    suite_hash = source_hash(json.dumps([op.name for op in SUITE]))
    meta.create_campaign(campaign_id, opts.campaign_name, suite_hash, {"kind": "aten-sweep", "hw": opts.hw,
                                                                        "simulate": opts.simulate})
    return campaign_id


@dataclass
class SweepPlan:
    campaign_id: str
    to_drive: list[RunRecord]
    runs: dict[str, RunRecord]  # op name -> the run that answers for it (done, resumed or new)
    reused: int = 0
    resumed: int = 0
    created: int = 0


def _checked_enough(config: dict, opts: SweepOptions) -> bool:
    """Whether a run checked correctness on at least as many seeds as this sweep asks: a quick sweep may reuse
    a thorough run, never the other way round."""
    default = len(DEFAULT_SEEDS)
    return (config.get("check_seeds") or default) >= (opts.check_seeds or default)


def plan_sweep(meta: MetadataStore, objects: ObjectStore, ops: list[AtenOp], opts: SweepOptions,
               spec_folder: Path) -> SweepPlan:
    """Which runs to drive: existing ones resumed, missing or stale ones created, finished ones reused."""
    campaign_id = open_campaign(meta, opts)
    existing = meta.campaign_runs(campaign_id)
    plan = SweepPlan(campaign_id, [], {})
    seed_hash = seed_identity(opts.hw)
    for op in ops:
        path, text = materialize_spec(op, spec_folder)
        run = existing.get(slot_of(op))
        current = (run is not None and run.spec_hash == source_hash(text) and run.strategy == opts.strategy
                   and run.config.get("seed_hash") == seed_hash and _checked_enough(run.config, opts))
        if current and run.status == "completed" and run.budget >= opts.budget:
            plan.runs[op.name], plan.reused = run, plan.reused + 1
            continue
        if current and run.status != "completed":
            check_resumable(run, text)
            if run.op_path != str(path):  # the state folder moved (another host, a copied store)
                meta.update_run(run.run_id, op_path=str(path), config={**run.config, "spec_path": str(path)})
                run = meta.get_run(run.run_id)
            plan.runs[op.name], plan.resumed = run, plan.resumed + 1
            plan.to_drive.append(run)
            continue
        cfg = SearchConfig(op=RUN_OP_PREFIX + op.name, spec_path=str(path), hw=opts.hw, strategy=opts.strategy,
                           budget=opts.budget, drafts=1, timeout_s=opts.timeout_s, simulate=opts.simulate,
                           concurrency=opts.concurrency, executor=opts.executor, reuse=False,
                           operator=opts.operator, model=opts.model, check_seeds=opts.check_seeds)
        run = create_run(meta, objects, cfg, text, {"aten": op.name, "seed_hash": seed_hash, "seeded_from": [],
                                                    "campaign": {
            "id": campaign_id, "slot": slot_of(op), "name": opts.campaign_name}})
        plan.runs[op.name], plan.created = run, plan.created + 1
        plan.to_drive.append(run)
    return plan
