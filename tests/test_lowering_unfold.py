"""aten.unfold lowers as the as_strided view it is (no data moves; the evaluator's guard counts a call of
``unfold`` as torch compute): the copy a later reshape or pointwise op needs is a Triton kernel reading the
view's strides, and the draft passes the real evaluator."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec

SPEC = Path(__file__).parent / "specs" / "any_op" / "unfold_patches.py"


def _forward(source: str) -> str:
    """The draft's forward body: where torch compute would show up if an op fell back to torch."""
    return source[source.index("    def forward("):]


def test_unfold_lowers_as_a_view_without_torch_compute() -> None:
    for target in ("cpu", "h100"):
        forward = _forward(lower_spec(SPEC, target))
        assert ".unfold(" not in forward and forward.count(".as_strided(") == 4
        assert "img.as_strided((*img.shape[:2], (img.shape[2] - 4) // 4 + 1, *img.shape[3:], 4)" in forward
        assert "seq.stride(2) * 2, *seq.stride()[3:], seq.stride(2))" in forward  # dim -1 of seq is dim 2
        assert set(re.findall(r"torch\.(\w+)\(", forward)) <= {"empty"}, forward
        assert "_copy(" in forward  # the unfolded input returned as is: copied, not aliased


def test_the_cpu_draft_is_exact(ke, tmp_path: Path) -> None:
    passes(ke, SPEC, lower_spec(SPEC, "cpu"), tmp_path, "cpu_draft", gpu_form=False)
