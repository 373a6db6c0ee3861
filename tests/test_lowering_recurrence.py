"""Recurrences lower whole: an input-projection GEMM and one scan kernel per layer stack, not one launch per op
per time step (lowering/recurrence.py), and tracing does not unroll them either (evaluators/recurrent_ops.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from helpers.lowering_checks import passes

from evaluators.recurrent_ops import whole_recurrences
from kernelevolve.lowering import lower_spec
from kernelevolve.lowering.trace import trace_spec

SPECS = Path(__file__).parent / "specs" / "any_op"
CASES = ["lstm_stack", "gru_bidirectional", "rnn_relu_unbatched", "lstm_random_state"]


def test_export_and_meta_runs_keep_a_layer_stack_one_op() -> None:
    traced = trace_spec(SPECS / "gru_bidirectional.py", which="test")
    ops = [str(n.target) for n in traced.graph.nodes if n.op == "call_function"]
    assert "kernelevolve.gru.default" in ops and len(ops) < 10, ops
    lstm = torch.nn.LSTM(4, 8, 3, batch_first=True).eval()
    x = torch.rand(2, 5, 4)
    with whole_recurrences(), torch.no_grad():
        out, (h, c) = lstm(x)  # the real implementation: the ATen op's values
        with torch.device("meta"):
            meta = torch.nn.LSTM(4, 8, 3, bidirectional=True)(torch.empty(5, 2, 4))
    with torch.no_grad():
        expected, (h2, c2) = lstm(x)
    assert torch.equal(out, expected) and torch.equal(h, h2) and torch.equal(c, c2)
    assert meta[0].shape == (5, 2, 16) and meta[1][0].shape == (6, 2, 8)
    assert torch.nn.modules.rnn._VF is torch._VF  # restored on exit


@pytest.mark.parametrize("name", CASES)
def test_a_recurrence_is_two_kernels_not_one_per_step(name: str) -> None:
    for target in ("cpu", "h100"):
        draft = lower_spec(SPECS / f"{name}.py", target, symbolic=target != "cpu")
        assert "def _rnnscan0(" in draft and "def _rnnproj0(" in draft and "_rnnscan1" not in draft
        assert "torch.lstm" not in draft and "torch.gru" not in draft and "_VF" not in draft


@pytest.mark.parametrize("name", CASES)
def test_the_cpu_draft_is_exact(name: str, ke, tmp_path: Path) -> None:
    passes(ke, SPECS / f"{name}.py", lower_spec(SPECS / f"{name}.py", "cpu"), tmp_path, name, gpu_form=False)


@pytest.mark.parametrize("name", ["lstm_stack", "gru_bidirectional"])
def test_the_nvidia_draft_is_exact_whole_or_step_by_step(name: str, ke, tmp_path: Path) -> None:
    """With BLOCK_H covering the hidden size, one persistent launch; with several programs per direction
    (BLOCK_H 16 < hidden) the interpreter gets one launch per step (programs run one after another there, so a
    grid barrier could never be met). TF32x3 off checks the IEEE branch too."""
    draft = lower_spec(SPECS / f"{name}.py", "h100", symbolic=True)
    assert "RNNSCAN0_BLOCK_H = 32" in draft and "RNNSCAN0_PERSIST = 1" in draft
    passes(ke, SPECS / f"{name}.py", draft, tmp_path, "whole")
    steps = draft.replace("RNNSCAN0_BLOCK_H = 32", "RNNSCAN0_BLOCK_H = 16").replace("_TF32X3 = 1", "_TF32X3 = 0")
    passes(ke, SPECS / f"{name}.py", steps, tmp_path, "steps")


def test_a_state_drawn_in_forward_is_drawn_the_same_way(ke, tmp_path: Path) -> None:
    """The draft calls torch.randn/rand where the reference does (allowed: drawing is not computing the op) and
    matches it only because both draws start from the evaluator's seed; a draft drawing in another order fails."""
    draft = lower_spec(SPECS / "lstm_random_state.py", "cpu")
    assert "torch.randn(" in draft and "torch.rand(" in draft
    swapped = draft.replace("torch.randn(", "torch.RANDN(").replace("torch.rand(", "torch.randn(")
    swapped = swapped.replace("torch.RANDN(", "torch.rand(")
    assert swapped != draft
    candidate = tmp_path / "swapped.py"
    candidate.write_text(swapped, encoding="utf-8")
    result = ke("eval", "--op", str(SPECS / "lstm_random_state.py"), "--hw", "cpu", str(candidate), "--json",
                "--state-dir", str(tmp_path / "state"))
    assert '"status": "incorrect"' in result.stdout, result.stdout
