"""A draft is traced at fixed sizes when the traced case is the only one it will run (a KernelBench file on a
GPU or on the interpreter), and symbolically otherwise (several cases; a simulated target, which checks on
the test case and costs the production one). Fixed sizes keep deep networks from minutes of export's guard
solving; the draft's pin guard then refuses any other size in one line (lowering/trace.py ``_fixed_sizes``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from kernelevolve.lowering import lower_spec
from kernelevolve.lowering.trace import trace_spec

CONV_STACK = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 3, padding=1) for _ in range(4))

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x))
        return x


def get_inputs():
    return [torch.randn(2, 4, 9, 11)]


def get_init_inputs():
    return [4]
'''


def _symbolic(spec: Path, target: str, **kwargs: bool) -> bool:
    """Whether any traced input or parameter size is a symbol."""
    traced = trace_spec(spec, production_sizes=target != "cpu", which="prod" if target.startswith("h") else "test",
                        **kwargs)
    return any(isinstance(size, torch.SymInt) and not size.node.expr.is_number
               for node in traced.graph.nodes if node.op == "placeholder"
               for size in getattr(node.meta.get("val"), "shape", ()))


@pytest.fixture
def conv_stack(tmp_path: Path) -> Path:
    spec = tmp_path / "conv_stack.py"
    spec.write_text(CONV_STACK, encoding="utf-8")
    return spec


def test_one_checked_case_is_traced_at_fixed_sizes_unless_asked(conv_stack: Path) -> None:
    assert not _symbolic(conv_stack, "h100")  # the production case, the only one a GPU checks and times
    assert not _symbolic(conv_stack, "cpu")  # the test case, the only one the interpreter checks
    assert _symbolic(conv_stack, "h100", symbolic=True)


def test_a_simulated_target_and_several_cases_keep_symbolic_sizes(conv_stack: Path) -> None:
    assert _symbolic(conv_stack, "mtia-v3")  # checked on the test case, costed on the production one
    several = Path(__file__).parent / "specs" / "any_op" / "conv2d_relu_bias.py"
    from evaluators.spec import load_spec

    assert len(load_spec(several).cases("test")) > 1
    assert _symbolic(several, "cpu")


def test_a_fixed_size_draft_passes_its_case_and_refuses_another_in_one_line(ke, conv_stack: Path,
                                                                            tmp_path: Path) -> None:
    source = lower_spec(conv_stack, "cpu")
    candidate = tmp_path / "fixed.py"
    candidate.write_text(source, encoding="utf-8")
    result = ke("eval", "--op", str(conv_stack), "--hw", "cpu", str(candidate), "--json",
                "--state-dir", str(tmp_path / "state"))
    assert result.returncode == 0 and json.loads(result.stdout)["status"] == "ok", result.stdout + result.stderr
    other = conv_stack.with_name("conv_stack_wider.py")
    other.write_text(CONV_STACK.replace("randn(2, 4, 9, 11)", "randn(2, 4, 9, 13)"), encoding="utf-8")
    result = ke("eval", "--op", str(other), "--hw", "cpu", str(candidate), "--json",
                "--state-dir", str(tmp_path / "state"))
    verdict = json.loads(result.stdout)
    assert verdict["status"] == "runtime_error", verdict
    assert "x has size 13 at dim 3, but the lowering was traced with it fixed at 11" in verdict["reason"]


SHORTCUT = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)
        self.shortcut = nn.Sequential() if cin == cout else nn.Sequential(nn.Conv2d(cin, cout, 1))

    def forward(self, x):
        return self.conv(x) + self.shortcut(x)


def get_inputs():
    return [torch.randn(2, 4, 5, 5)]


def get_init_inputs():
    return [4, 6]
'''


def test_constructor_args_that_build_other_layers_are_left_out_not_a_failure(tmp_path: Path) -> None:
    """A shortcut conv exists only where channels change: the traced args have one, other args do not. The
    draft serves the traced args; before, recording the other args' shapes failed the whole lowering."""
    from kernelevolve.lowering.trace import add_state_shapes

    spec = tmp_path / "shortcut.py"
    spec.write_text(SHORTCUT, encoding="utf-8")
    traced = trace_spec(spec, which="test")
    assert any(target == "shortcut.0.weight" for _, target in traced.state.values())
    from evaluators.spec import load_spec

    add_state_shapes(traced, load_spec(spec).reference_cls, [4, 4])
    assert list(traced.state_shapes) == [traced.init_key]
    assert "class TritonModel" in lower_spec(spec, "cpu")
