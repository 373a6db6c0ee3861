"""``ke best``: shape-aware export. Each measured case goes to its fastest node; where none beat eager it
falls back to PyTorch, and says so.

The run is real (DuckDB file and object store written through the runner); its per-case timings are
written by the test, because a CPU machine cannot time kernels. The exported dispatcher is then imported
in a fresh interpreter process and run on both kinds of shapes.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO_ROOT

from evaluators.identity import source_hash
from evaluators.result import CaseResult, EvaluationResult
from kernelevolve.export_cpu import with_cpu_fallback
from kernelevolve.operators.base import Proposal
from kernelevolve.run_records import SearchConfig, create_run, finish_run, persist_node
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore

SPEC = '''import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs(device="cpu"):
    return {"wide": (torch.randn(2000, device=device),), "odd": (torch.randn(33, 65, device=device),)}
'''
KERNEL = (Path(REPO_ROOT) / "knowledge_base" / "code_samples" / "swish.py").read_text()


def _run_with_timings(state: Path, *nodes: dict[str, tuple[float, float]],
                      finish: dict[int, dict[str, tuple[float, float]]] | None = None,
                      spec_text: str = SPEC, kernel: str = KERNEL, op: str = "tiny_swish") -> str:
    """A run whose node i+1 has ``nodes[i]`` as per-case (latency, eager) ms; fitness is the geomean speedup,
    as the evaluator computes it. With ``finish``, the run is closed by ``finish_run`` whose fresh
    re-measurements are those timings (node -> cases). Every node is ``kernel`` plus a comment naming it."""
    spec = state.parent / "tiny_spec.py"
    spec.write_text(spec_text)
    meta, objects = MetadataStore(state / "ke.duckdb"), ObjectStore(str(state / "artifacts"))
    run = create_run(meta, objects, SearchConfig(op=op, spec_path=str(spec), hw="h100",
                                                 strategy="greedy", budget=len(nodes)), spec_text)

    def result(timings: dict[str, tuple[float, float]]) -> EvaluationResult:
        cases = [CaseResult(name, latency_ms=ms, eager_ms=eager) for name, (ms, eager) in timings.items()]
        fitness = math.prod(eager / ms for ms, eager in timings.values()) ** (1 / len(timings))
        return EvaluationResult("ok", fitness=fitness, target="h100", timed=True, cases=cases,
                                speedup_vs_eager=fitness)

    for i, timings in enumerate(nodes, start=1):
        source = kernel + f"\n# variant {i}\n"
        persist_node(meta, objects, run, "offline", i, None, Proposal(source, {}), source_hash(source),
                     result(timings))
    if finish is not None:
        by_source = {kernel + f"\n# variant {i}\n": i for i in range(1, len(nodes) + 1)}
        remeasured: list[int] = []

        def evaluate(source: str) -> EvaluationResult:
            remeasured.append(by_source[source])
            return result(finish[by_source[source]])

        done = finish_run(meta, objects, run, evaluate, "budget")
        assert sorted(remeasured) == sorted(finish), remeasured  # the best and every per-case winner, once each
        assert done.config["final"]["node_id"] == done.best_node_id
    del meta  # one connection per DuckDB file: let ke open it
    return run.run_id


def test_lost_cases_fall_back_to_pytorch(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    run_id = _run_with_timings(state, {"wide": (0.010, 0.025), "odd": (0.012, 0.009)})
    out = tmp_path / "deploy" / "swish_kernel.py"
    out.parent.mkdir()
    result = ke("best", run_id, "--out", str(out), "--state-dir", str(state))
    assert result.returncode == 0, result.stderr
    assert "odd: 0.75x vs eager -> falls back to PyTorch" in result.stdout
    assert "wide: 2.50x vs eager -> node 1" in result.stdout
    as_json = ke("best", run_id, "--out", str(out), "--state-dir", str(state), "--json").json()
    assert [c["case"] for c in as_json["fallback_cases"]] == ["odd"]
    assert abs(as_json["fallback_cases"][0]["speedup_vs_eager"] - 0.75) < 1e-9
    assert [c["case"] for c in as_json["kernel_cases"]] == ["wide"]
    assert sorted(Path(f).name for f in as_json["files"]) == [
        "swish_kernel.py", "swish_kernel_kernel.py", "swish_kernel_reference.py"]

    routes = _routes(out)
    assert routes == {"wide": "node 1", "odd": "pytorch", "unseen": "node 1"}


def test_a_winner_everywhere_is_written_as_is(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    run_id = _run_with_timings(state, {"wide": (0.010, 0.025), "odd": (0.008, 0.009)})
    out = tmp_path / "k.py"
    result = ke("best", run_id, "--out", str(out), "--state-dir", str(state), "--json")
    assert result.returncode == 0, result.stderr
    # the kernel as stored, with only the CPU-only preamble added (TRITON_INTERPRET where torch sees no GPU)
    assert out.read_text() == with_cpu_fallback(KERNEL + "\n# variant 1\n") and result.json()["fallback_cases"] == []
    assert json.loads(result.stdout)["files"] == [str(out)]
    missing = ke("best", run_id, "--out", str(tmp_path / "no" / "k.py"), "--state-dir", str(state))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


PROBE_ROUTES = '''
import sys, torch
sys.path.insert(0, {folder!r})
import {module} as m
model = m.DispatchModel()
routes = {{}}
for name, x in {{"wide": torch.randn(2000), "odd": torch.randn(33, 65), "unseen": torch.randn(7, 3)}}.items():
    y = model(x)
    assert torch.allclose(y, x * torch.sigmoid(x), atol=1e-5), name
    routes[name] = model.last_route
print(routes)
'''


def _routes(out: Path) -> dict[str, str]:
    probe = PROBE_ROUTES.format(folder=str(out.parent), module=out.stem)
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=300)
    assert ran.returncode == 0, ran.stderr
    return eval(ran.stdout.strip().splitlines()[-1])  # noqa: S307 - our own probe's printed dict


def test_each_case_goes_to_its_fastest_node_not_the_geomean_winner(ke, tmp_path: Path) -> None:
    """The conv1d situation: node 2 wins the geomean (1.2x, 1.2x) but node 1 is 2.5x on 'odd' and loses
    'wide' badly, so 'odd' ships node 1 and 'wide' ships node 2, the overall best."""
    state = tmp_path / "state"
    run_id = _run_with_timings(state, {"wide": (0.050, 0.025), "odd": (0.004, 0.010)},
                               {"wide": (0.020, 0.024), "odd": (0.010, 0.012)})
    out = tmp_path / "deploy" / "swish_best.py"
    out.parent.mkdir()
    result = ke("best", run_id, "--out", str(out), "--state-dir", str(state), "--json").json()
    assert result["node_id"] == 2 and result["kernel_nodes"] == [2, 1]
    assert {c["case"]: c["node_id"] for c in result["kernel_cases"]} == {"wide": 2, "odd": 1}
    assert result["fallback_cases"] == []
    assert sorted(Path(f).name for f in result["files"]) == [
        "swish_best.py", "swish_best_kernel.py", "swish_best_node1.py", "swish_best_reference.py"]
    assert (out.parent / "swish_best_node1.py").read_text().endswith("# variant 1\n")
    assert _routes(out) == {"wide": "node 2", "odd": "node 1", "unseen": "node 2"}


def test_per_case_winners_are_chosen_by_the_fresh_remeasurement(ke, tmp_path: Path) -> None:
    """Search time says node 1 wins 'odd'; the run's final re-measurement (finish_run) says it does not, and
    says node 3 (never a search-time winner) is not re-measured at all: routes follow the fresh numbers."""
    state = tmp_path / "state"
    run_id = _run_with_timings(
        state, {"wide": (0.050, 0.025), "odd": (0.004, 0.010)}, {"wide": (0.020, 0.024), "odd": (0.010, 0.012)},
        {"wide": (0.030, 0.024), "odd": (0.009, 0.012)},
        finish={2: {"wide": (0.020, 0.024), "odd": (0.010, 0.012)},
                1: {"wide": (0.050, 0.025), "odd": (0.011, 0.012)}})
    meta = MetadataStore(state / "ke.duckdb")
    assert meta.case_winners(run_id) == {"odd": (1, 0.004), "wide": (2, 0.020)}
    assert meta.get_run(run_id).config["final"]["per_case"] == {"odd": 2, "wide": 2}
    del meta
    out = tmp_path / "k.py"
    result = ke("best", run_id, "--out", str(out), "--state-dir", str(state), "--json").json()
    assert {c["case"]: c["node_id"] for c in result["kernel_cases"]} == {"wide": 2, "odd": 2}
    assert result["files"] == [str(out)] and out.read_text().endswith("# variant 2\n")


def test_no_node_faster_than_eager_on_a_case_means_pytorch_there(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    run_id = _run_with_timings(state, {"wide": (0.010, 0.025), "odd": (0.020, 0.009)},
                               {"wide": (0.030, 0.025), "odd": (0.010, 0.009)})
    out = tmp_path / "deploy" / "s.py"
    out.parent.mkdir()
    result = ke("best", run_id, "--out", str(out), "--state-dir", str(state), "--json").json()
    assert [c["case"] for c in result["fallback_cases"]] == ["odd"]
    assert result["kernel_nodes"] == [1]  # node 2 won nothing it may ship: it is not exported
    assert _routes(out) == {"wide": "node 1", "odd": "pytorch", "unseen": "node 1"}
