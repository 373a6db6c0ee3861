"""A spec's text is lowered once per process and target: ``ke search`` checks that it lowers before any executor
starts, and the run's first drafts come from the same lowering (before: traced twice, seconds each at published
sizes). A failure is not kept, and another target or another text is lowered anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelevolve.lowering import LoweringError, lower_spec_text

SPEC = (Path(__file__).parent / "specs" / "any_op" / "sorting.py").read_text(encoding="utf-8")


def test_the_same_text_and_target_are_lowered_once() -> None:
    first = lower_spec_text("sorting", SPEC, "cpu")
    assert lower_spec_text("sorting", SPEC, "cpu") is first
    gpu = lower_spec_text("sorting", SPEC, "h100")
    assert gpu is not first and gpu != first  # the NVIDIA draft differs (tl.sort form)
    changed = lower_spec_text("sorting", SPEC + "\n# another text\n", "cpu")
    assert changed is not first and changed == first


def test_a_failure_is_not_kept() -> None:
    import kernelevolve.lowering as lowering

    broken = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
              "        return torch.linalg.svdvals(x)\n"
              "def get_inputs():\n    return [torch.randn(4, 8, 8)]\ndef get_init_inputs():\n    return []\n")
    kept = dict(lowering._LOWERED)
    with pytest.raises(LoweringError, match="no Triton lowering"):
        lower_spec_text("svd", broken, "cpu")
    assert lowering._LOWERED == kept
