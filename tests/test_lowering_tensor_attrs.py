"""References keeping state in plain tensor attributes (``self.hidden = torch.randn(...)``, no buffer) that
forward copies into and reassigns: they trace (the attributes as buffers for the export), the draft returns
only the reference's result, and a forward whose result reads state it then overwrites is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from helpers.lowering_checks import passes

from evaluators.spec import load_spec
from kernelevolve.lowering import LoweringError, lower_spec
from kernelevolve.lowering.trace import trace_module

# An RNN cell keeping its hidden state in a plain attribute sized from a module constant, next to a read-only
# one (a constant the draft embeds, as before).
CELL = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.scale = torch.full((output_size,), 0.5)
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x, initial_hidden=None):
        if initial_hidden is not None:
            self.hidden.copy_(initial_hidden)
        self.hidden = self.hidden.to(x.device)
        self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
        return self.h2o(self.hidden) * self.scale


batch_size = BATCH
input_size = INPUT
hidden_size = HIDDEN
output_size = 8


def get_inputs():
    return [torch.rand(batch_size, input_size), torch.rand(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
'''


def _spec(tmp_path: Path, name: str, text: str = CELL, batch: int = 4, input_size: int = 8, hidden: int = 16,
          ) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(text.replace("BATCH", str(batch)).replace("INPUT", str(input_size))
                    .replace("HIDDEN", str(hidden)), encoding="utf-8")
    return path


def test_the_cpu_draft_reads_the_attribute_as_state_returns_one_output_and_is_exact(ke, tmp_path: Path) -> None:
    spec = _spec(tmp_path, "rnn_cell")
    source = lower_spec(spec, "cpu")
    assert "self.get_buffer('hidden')" in source  # its sizes, under the reference's name
    assert "const_" in source and "self.get_buffer('scale')" not in source  # read only: embedded as before
    forward = source.split("def forward(", 1)[1]
    assert forward.count("return ") == 1 and "return (" not in forward  # the new hidden state is not returned
    passes(ke, spec, source, tmp_path, "cpu_draft", gpu_form=False)


def test_tracing_leaves_the_reference_as_it_was() -> None:
    """The attributes are buffers only for the export: the traced forward's reassignment is undone too."""
    namespace: dict = {}
    exec(compile(CELL.replace("BATCH", "4").replace("INPUT", "8").replace("HIDDEN", "16"), "cell", "exec"),
         namespace)
    model = namespace["Model"](8, 16, 8).eval()
    hidden, scale = model.hidden, model.scale
    before = hidden.clone()
    traced = trace_module(model, tuple(namespace["get_inputs"]()))
    assert ("buffer", "hidden") in traced.state.values() and len(traced.constants) == 1
    assert model.hidden is hidden and model.scale is scale and not dict(model.named_buffers())
    assert torch.equal(hidden, before)  # the traced copy_ wrote a fake, not the reference's tensor
    assert type(model.hidden) is torch.Tensor and "hidden" in vars(model)


def test_a_result_that_reads_state_it_overwrites_is_refused(tmp_path: Path) -> None:
    """Without an initial hidden state each call continues from the last one: no draft is right for the
    judge's fresh reference and repeated calls alike, so the lowering says why instead of drafting one."""
    carried = CELL.replace("torch.rand(batch_size, input_size), torch.rand(batch_size, hidden_size)",
                           "torch.rand(batch_size, input_size)")
    with pytest.raises(LoweringError, match="carries state across calls: its forward reads 'hidden'"):
        lower_spec(_spec(tmp_path, "carried", carried), "cpu")


def test_a_size_the_reference_reads_from_the_module_keeps_its_production_value(tmp_path: Path) -> None:
    """``self.hidden`` is sized by ``batch_size`` read at construction, where the judge has the constants
    restored: the shrunk case keeps that batch and shrinks the other extents, or no case would run."""
    spec = load_spec(_spec(tmp_path, "big_cell", batch=128, input_size=1024, hidden=1024))
    assert "batch_size" not in spec.shrunk and spec.shrunk["hidden_size"][1] < 1024
    x, h = spec.cases("test")["case0"]
    assert x.shape[0] == h.shape[0] == 128 and x.numel() + h.numel() <= 100_000
