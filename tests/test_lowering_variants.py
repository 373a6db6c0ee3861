"""One candidate from one draft per input structure (lowering/variants.py, issue #32 item 4): a spec whose
cases differ in dtype, rank and broadcast passes the evaluator, the run-time key is the trace's, and inputs of
a structure no draft was traced on are refused in one line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from helpers.lowering_checks import passes

from evaluators.spec import load_spec
from evaluators.static_checks import check_source
from kernelevolve.lowering import lower_spec
from kernelevolve.lowering.trace import structure
from kernelevolve.lowering.variants import STRUCTURE

SPECS = Path(__file__).parent / "specs"
MIXED = SPECS / "mixed_structures.py"


@pytest.fixture(scope="module")
def mixed_draft() -> str:
    return lower_spec(MIXED, "cpu", per_structure=True)


def test_each_structure_gets_a_draft_and_the_candidate_passes(mixed_draft: str, ke, tmp_path: Path) -> None:
    structures = {structure(tuple(case)) for case in load_spec(MIXED).cases("test").values()}
    assert len(structures) == 5
    assert mixed_draft.count("    def _draft") == 5 and "_DRAFT_KEYS = [" in mixed_draft
    assert check_source(mixed_draft) == []
    verdict = passes(ke, MIXED, mixed_draft, tmp_path, "mixed", gpu_form=False)
    assert {c["name"] for c in verdict["cases"] if c["status"] == "ok"} == {
        "33_fp32", "7x33_fp16", "65_int32", "7x33_row_fp32", "0x16_empty_fp32"}


def test_the_run_time_key_is_the_traces_key() -> None:
    namespace: dict = {"torch": torch}
    exec(STRUCTURE, namespace)  # noqa: S102 - the helper's own text, as the candidate defines it
    cases = [*load_spec(MIXED).cases("test").values(), (torch.ones(1, 4, dtype=torch.bool), 2.5, 3)]
    for case in cases:
        assert namespace["_structure"](*case) == structure(tuple(case))


def test_inputs_of_a_structure_no_draft_serves_are_refused(mixed_draft: str, tmp_path: Path) -> None:
    path = tmp_path / "mixed_candidate.py"
    path.write_text(mixed_draft, encoding="utf-8")
    module_spec = importlib.util.spec_from_file_location("mixed_candidate", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    model = module.TritonModel()
    x = torch.randn(5, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"no draft was lowered for inputs of structure .*float64"):
        model(x, x)
    y = torch.randn(9)  # a size no case has: each draft keeps its sizes symbolic
    assert torch.allclose(model(y, -y), torch.maximum(y, -y) * 2 - y)


def test_a_spec_of_one_structure_gets_the_single_trace() -> None:
    spec = SPECS / "kernelbench_swish.py"
    assert lower_spec(spec, "cpu", per_structure=True) == lower_spec(spec, "cpu")
