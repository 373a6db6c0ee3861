"""One rule for which evaluation counts for a node (kernelevolve/store/evaluations.py), on a real DuckDB file
and folder store: the run's passing re-measurement of that node, else its search-time evaluation, rebuilt
from the database where the artifact is lost. The report, the exports and the matrices all read it."""

from __future__ import annotations

from pathlib import Path

from helpers.report_store import write_gpu_like_run

from kernelevolve.store.evaluations import FINAL, SEARCH, authoritative_evaluation
from kernelevolve.store.layout import final_key
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore


def _open(state: Path, run_id: str):
    meta, objects = MetadataStore(state / "ke.duckdb"), ObjectStore(str(state / "artifacts"))
    run = meta.get_run(run_id)
    best = meta.best_nodes(run_id, 1)[0]
    return meta, objects, run, best


def test_the_final_re_measurement_counts_only_for_its_own_passing_node(tmp_path: Path, capsys) -> None:
    run_id = write_gpu_like_run(tmp_path)
    meta, objects, run, best = _open(tmp_path, run_id)
    final = objects.get_json(final_key(run_id, best.node_id, True))
    evaluation, source = authoritative_evaluation(meta, objects, run, best, best=True)
    assert source == FINAL and evaluation == final
    searched = objects.get_json(ObjectStore.node_prefix(run_id, best.node_id) + "evaluation.json")
    assert searched["cases"] != final["cases"]  # the two differ, so the source is visible in what is returned

    other = next(n for n in meta.nodes(run_id) if n.status == "ok" and n.node_id != best.node_id)
    evaluation, source = authoritative_evaluation(meta, objects, run, other, best=True)  # final.json is best's
    assert source == SEARCH and evaluation["cases"] != final["cases"]
    assert authoritative_evaluation(meta, objects, run, other, best=False, fallback=False) == (None, "")

    objects.put_json(final_key(run_id, best.node_id, True), {**final, "status": "incorrect"})
    assert authoritative_evaluation(meta, objects, run, best, best=True) == (searched, SEARCH)

    (tmp_path / "artifacts" / final_key(run_id, best.node_id, True)).write_text("{truncated", encoding="utf-8")
    assert authoritative_evaluation(meta, objects, run, best, best=True) == (searched, SEARCH)
    assert "cannot be read" in capsys.readouterr().err


def test_a_lost_search_time_evaluation_is_rebuilt_from_the_database(tmp_path: Path, capsys) -> None:
    run_id = write_gpu_like_run(tmp_path, finish=False)
    meta, objects, run, best = _open(tmp_path, run_id)
    (tmp_path / "artifacts" / ObjectStore.node_prefix(run_id, best.node_id) / "evaluation.json").unlink()
    evaluation, source = authoritative_evaluation(meta, objects, run, best, best=True)
    assert source == SEARCH and evaluation["extra"] == {"rebuilt_from": "run database"}
    assert evaluation["fitness"] == best.fitness and len(evaluation["cases"]) == 4
    assert "rebuilt from the run database" in capsys.readouterr().err
