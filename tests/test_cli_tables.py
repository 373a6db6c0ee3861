"""``ke runs`` and ``ke campaign`` print one run table: the same columns with the same meaning (``best node``
is a node id, ``best fitness`` a fitness, in both), and op names in full, never cut into ambiguity (issue 30,
point 8). The store is built directly, so no search runs; the commands are the real ``ke``."""

from __future__ import annotations

from pathlib import Path

from evaluators.identity import source_hash
from evaluators.result import EvaluationResult
from kernelevolve.builtin_specs import resolve_op
from kernelevolve.campaign import load_plan
from kernelevolve.operators.base import Proposal
from kernelevolve.run_records import SearchConfig, create_run, persist_node
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore

CAMPAIGN = 'name = "tables"\n[[runs]]\nop = "swish"\nhw = "cpu"\nbudget = 3\n'


def _run(meta, objects, op: str, spec: Path, fitness: list[float], extra: dict | None = None) -> str:
    """A completed run of ``op`` with one correct node per fitness (node ids from 1)."""
    run = create_run(meta, objects, SearchConfig(op=op, spec_path=str(spec), hw="cpu", strategy="greedy",
                                                 budget=3), spec.read_text(), extra)
    for node_id, value in enumerate(fitness, start=1):
        code = f"x = {node_id}\n"
        result = EvaluationResult("ok", fitness=value, target="cpu", timed=True, speedup_vs_eager=value)
        persist_node(meta, objects, run, "offline", node_id, None, Proposal(code, {}), source_hash(code), result)
    meta.update_run(run.run_id, status="completed")
    return run.run_id


def test_runs_and_campaign_print_the_same_columns_with_full_op_names(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    meta, objects = MetadataStore(state / "ke.duckdb"), ObjectStore(str(state / "artifacts"))
    spec = Path(resolve_op("swish"))
    long_a, long_b = "aten.logcumsumexp.default", "aten.logcumsumexp.dimname"  # one 14-char prefix
    _run(meta, objects, long_a, spec, [0.5])
    _run(meta, objects, long_b, spec, [0.25, 0.75])
    plan_file = tmp_path / "c.toml"
    plan_file.write_text(CAMPAIGN)
    plan = load_plan(plan_file)
    meta.create_campaign("c0ffee00", plan.name, plan.plan_hash, {"file": str(plan_file)})
    swish = _run(meta, objects, "swish", spec, [1.25, 2.5, 1.5],
                 {"campaign": {"id": "c0ffee00", "slot": 0, "name": plan.name}})

    runs = ke("runs", "--state-dir", str(state))
    assert runs.returncode == 0, runs.stderr
    header = runs.stdout.splitlines()[0]
    assert header.split() == ["run", "op", "hw", "strategy", "status", "nodes", "best", "node", "best", "fitness"]
    rows = {line.split()[0]: line.split() for line in runs.stdout.splitlines()[1:]}
    assert {r[1] for r in rows.values()} == {long_a, long_b, "swish"}  # full names, distinct
    assert rows[swish][-2:] == ["2", "2.500"]  # best node id, then its fitness

    campaign = ke("campaign", str(plan_file), "--state-dir", str(state), "--executor", "local")
    assert campaign.returncode == 0, campaign.stderr
    lines = campaign.stdout.strip().splitlines()
    assert lines[1].split() == ["slot"] + header.split()  # the same columns, after the campaign's slot
    assert lines[2].split() == ["0"] + rows[swish]  # and the same cells for the same run


def test_the_table_widens_to_its_longest_cell() -> None:
    from kernelevolve.cli.tables import RUN_COLUMNS, render, run_cells

    name = "aten._native_batch_norm_legit_no_training.default"
    lines = render(RUN_COLUMNS, [run_cells("abcd1234", name, "cpu", "greedy", "running", 0, 1, None, None)])
    assert name in lines[1] and lines[1].split()[-2:] == ["-", "-"]
    assert lines[0].index("best node") > lines[1].index(name) + len(name) - 1
