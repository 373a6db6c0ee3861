"""cummax/cummin (with indices), logcumsumexp and lgamma lower to Triton and pass the real evaluator."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec

SPEC = Path(__file__).parent / "specs" / "any_op" / "scans_lgamma.py"


def test_scans_and_lgamma_lower_without_torch_compute() -> None:
    cpu = lower_spec(SPEC, "cpu")
    assert "_cummax_combine" in cpu and "_cummin_combine" in cpu and "_logaddexp_combine" in cpu
    assert "_lgamma(" in cpu and "torch.cummax(" not in cpu and "torch.lgamma(" not in cpu
    assert "tl.gather(" in cpu and "tl.associative_scan" not in cpu  # the interpreter's fast form
    assert "tl.associative_scan" in lower_spec(SPEC, "h100")


def test_the_cpu_draft_is_exact(ke, tmp_path: Path) -> None:
    passes(ke, SPEC, lower_spec(SPEC, "cpu"), tmp_path, "cpu_draft", gpu_form=False)


@pytest.mark.slow
def test_the_nvidia_draft_is_exact(ke, tmp_path: Path) -> None:
    """tl.associative_scan with a custom combine runs element by element in the interpreter: slow, exact."""
    passes(ke, SPEC, lower_spec(SPEC, "h100"), tmp_path, "nvidia_draft")
