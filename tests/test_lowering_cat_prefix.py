"""A cat whose inputs start with an earlier cat's inputs reads that cat's output as one source (a dense
block's ``cat(features)`` after each ``append``): two sources per cat instead of one per input, exact on the
interpreter for the cpu and the GPU form."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec

SPEC = Path(__file__).parent / "specs" / "any_op" / "growing_concat.py"


def sources_per_cat(source: str) -> list[int]:
    """How many sources each cat of the forward reads (its ``_cat_into`` call's list), in forward order."""
    return [len(m.group(1).split(", ")) for m in re.finditer(r"_cat_into\(_cat\d+, buf\d+, \d+, \[([^]]*)\]", source)]


def test_growing_cats_read_the_previous_cat_whole() -> None:
    source = lower_spec(SPEC, "cpu")
    # steps 1-4 join 2, 3, 4, 5 inputs; each after the first reuses the one before it. The cat along dim 3
    # shares no earlier cat's dim; the half-precision cat has no earlier cat in its dtype.
    assert sources_per_cat(source) == [2, 2, 2, 2, 3, 5]


def test_the_drafts_are_exact(ke, tmp_path: Path) -> None:
    passes(ke, SPEC, lower_spec(SPEC, "cpu"), tmp_path, "cpu_draft", gpu_form=False)
    passes(ke, SPEC, lower_spec(SPEC, "h100", symbolic=True), tmp_path, "gpu_draft", gpu_form=True)
