"""sort/topk/argsort/median lower with their indices, and both the interpreter's ranked form and the GPU's
tl.sort form are exact under the real evaluator."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec

SPEC = Path(__file__).parent / "specs" / "any_op" / "sorting.py"


def test_indices_lower_in_both_forms() -> None:
    cpu, gpu = lower_spec(SPEC, "cpu"), lower_spec(SPEC, "h100")
    for draft in (cpu, gpu):
        assert "with indices" in draft and "_median0" in draft and "torch.sort(" not in draft
        assert "torch.topk(" not in draft and "torch.median(" not in draft
    assert "if BLOCK_O * BLOCK_R * BLOCK_R <=" in cpu  # the interpreter ranks (a scatter) while it fits
    assert "BLOCK_R * BLOCK_R" not in gpu and "tl.sort(packed, dim=1)" in gpu


def test_the_interpreter_draft_is_exact_and_quick(ke, tmp_path: Path) -> None:
    """Quick is the candidate's own run on every case, as the evaluator clocks it (the tl.sort form takes
    minutes there): not the whole command, whose start-up on a loaded 2-core machine is most of its time."""
    verdict = passes(ke, SPEC, lower_spec(SPEC, "cpu"), tmp_path, "cpu_draft", gpu_form=False)
    ran = verdict["extra"]["phases"]["candidate"]
    assert ran < 60, f"the ranked form should check in seconds, took {ran:.1f} s"


@pytest.mark.slow
def test_the_gpu_draft_is_exact(ke, tmp_path: Path) -> None:
    """The tl.sort form, run by the interpreter (slowly: its sort reduces element by element)."""
    passes(ke, SPEC, lower_spec(SPEC, "h100"), tmp_path, "gpu_draft")
