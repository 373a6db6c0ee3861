"""The trace skips ``run_decompositions`` only where it would change nothing (lowering/trace.py): the drafts are
the same text either way, and a graph that needs a decomposition still gets it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import kernelevolve.lowering.trace as trace
from kernelevolve.lowering import lower_spec

SPECS = Path(__file__).parent / "specs"


@pytest.mark.parametrize("spec", ["any_op/pointwise_chain.py", "any_op/sum_dim.py", "mixed_structures.py"])
def test_skipping_the_decompositions_leaves_the_draft_unchanged(spec: str, monkeypatch) -> None:
    fast = lower_spec(SPECS / spec, "cpu", per_structure=True)
    monkeypatch.setattr(trace, "_already_lowerable", lambda program: False)
    assert lower_spec(SPECS / spec, "cpu", per_structure=True) == fast


def test_a_graph_with_a_decomposable_op_is_decomposed() -> None:
    class Norm(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.layer_norm(x, [8]) + x.abs()

    class Abs(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.abs() * 2

    x = torch.randn(4, 8)
    norm = trace.trace_module(Norm(), (x,))
    ops = {str(n.target) for n in norm.graph.nodes if n.op == "call_function"}
    assert "aten.layer_norm.default" not in ops and "aten.native_layer_norm.default" in ops  # a composite, decomposed
    plain = trace.trace_module(Abs(), (x,))
    assert {str(n.target) for n in plain.graph.nodes if n.op == "call_function"} == {"aten.abs.default",
                                                                                      "aten.mul.Tensor"}
