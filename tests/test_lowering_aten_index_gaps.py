"""The general lowering's scatters (scatter.py), index puts (index_put.py), bucketize (bucketize.py) and integer
cummax/cummin (rows.py): a spec using each on other dims, strided inputs and repeated indices passes the
evaluator, and the ops and forms the emitters do not lower are refused in one line naming them."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.lowering_checks import passes

from kernelevolve.lowering import LoweringError, lower_spec

SPEC = Path(__file__).parent / "specs" / "aten_index_gaps.py"


@pytest.mark.slow
def test_lowered_index_ops_pass_the_evaluator(ke, tmp_path: Path) -> None:
    source = lower_spec(SPEC, "cpu")
    for kernel in ("def _scatter0(", "def _scatter2(", "def _bucketize1(", "def _cummax0(", "def _cummin0(",
                   "def _index_put0(", "def _index_put5(", "def _index_put_cast0("):
        assert kernel in source
    assert "tl.atomic_add" in source and "(floating point only)" not in source
    verdict = passes(ke, SPEC, source, tmp_path, "aten_index_gaps", gpu_form=False)
    assert {c["name"] for c in verdict["cases"] if c["status"] == "ok"} == {"7x33", "12x129", "1x5"}


def _one_op_spec(path: Path, args: str, body: str, inputs: str) -> Path:
    """A spec whose reference is one line, with one case (production and test alike)."""
    path.write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass PytorchModel(nn.Module):\n"
        f"    def forward(self, {args}):\n        return {body}\n\n\n"
        f"def get_inputs(device='cpu'):\n    return {{'a': {inputs}}}\n\n\n"
        "def get_test_inputs(device='cpu'):\n    return get_inputs(device)\n", encoding="utf-8")
    return path


def test_unsupported_forms_are_named(tmp_path: Path) -> None:
    spec = _one_op_spec(tmp_path / "scatter_multiply.py", "x, idx",
                        "torch.ops.aten.scatter.value_reduce(x, 1, idx, 2.0, reduce='multiply')",
                        "(torch.randn(4, 8, device=device), torch.randint(0, 8, (4, 3), device=device))")
    with pytest.raises(LoweringError, match=r"reduce='multiply' \(only 'add'\)"):
        lower_spec(spec, "cpu")


def test_boolean_mask_index_put_is_refused(tmp_path: Path) -> None:
    spec = _one_op_spec(tmp_path / "index_put_mask.py", "x, v", "torch.ops.aten.index_put.default(x, [x > 0], v)",
                        "(torch.randn(4, 8, device=device), torch.randn(1, device=device))")
    with pytest.raises(LoweringError, match=r"index_put\.default with boolean-mask indices"):
        lower_spec(spec, "cpu")
