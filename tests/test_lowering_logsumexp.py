"""logsumexp is lowered whole (one row kernel, not its four-kernel decomposition), and its drafts are exact on
the interpreter for the GPU form (the row in one tile) and the CPU form (two passes), special rows included."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec

SPEC = Path(__file__).parent / "specs" / "any_op" / "logsumexp_rows.py"


def test_each_logsumexp_is_one_kernel_and_exact(ke, tmp_path: Path) -> None:
    gpu = lower_spec(SPEC, "h100")
    assert len(re.findall(r"_logsumexp\d+\[", gpu)) == 3
    assert "_reduce" not in gpu  # no max and sum kernels of the decomposition
    passes(ke, SPEC, gpu, tmp_path, "gpu_draft")
    passes(ke, SPEC, lower_spec(SPEC, "cpu"), tmp_path, "cpu_draft", gpu_form=False)
