"""State a reference keeps in plain tensor attributes (``self.hidden = torch.randn(...)``, not a buffer).

``torch.export`` lifts such a tensor as a constant and refuses a forward that mutates it (``copy_``), and a
forward that reassigns it would leave a fake tensor on the module. For the export the attributes are made
non-persistent buffers (``as_buffers``), which export lifts to graph inputs and whose mutation it
functionalizes into extra graph outputs; ``user_outputs`` then cuts the graph back to the reference's own
result. The judge builds the reference afresh and calls it on each case in turn, so a forward whose result
depends on a value it overwrites (state carried from one call to the next) has no one right answer:
``reads_value`` finds it and the lowering refuses it rather than draft it for the first call only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch.fx import Graph, Node

from kernelevolve.lowering.errors import LoweringError

aten = torch.ops.aten
# ops reading only their tensor arguments' sizes, dtype and device, never the values
_METADATA_ONLY = frozenset({
    aten.sym_size.int, aten.sym_stride.int, aten.sym_numel.default, aten.sym_storage_offset.default,
    aten._assert_tensor_metadata.default, aten.empty_like.default, aten.zeros_like.default,
    aten.ones_like.default, aten.full_like.default, aten.new_empty.default, aten.new_zeros.default,
    aten.new_ones.default, aten.new_full.default,
})
# ops whose first argument is overwritten whole: only its sizes (what the source broadcasts to) are read
_OVERWRITES_FIRST = frozenset({aten.copy.default, aten.copy_.default})


def tensor_attrs(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Dotted name -> tensor of every plain tensor attribute (neither parameter nor buffer) of the modules."""
    found: dict[str, torch.Tensor] = {}
    for prefix, module in model.named_modules():
        for name, value in vars(module).items():
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                found[f"{prefix}.{name}" if prefix else name] = value
    return found


def _owner(model: torch.nn.Module, name: str) -> tuple[torch.nn.Module, str]:
    path, _, leaf = name.rpartition(".")
    return (model.get_submodule(path) if path else model), leaf


@contextlib.contextmanager
def as_buffers(model: torch.nn.Module, attrs: dict[str, torch.Tensor]) -> Iterator[None]:
    """The attributes registered as non-persistent buffers for the duration, then put back as they were (so
    a reassignment the traced forward made is undone too)."""
    done: list[str] = []
    try:
        for name, value in attrs.items():
            owner, leaf = _owner(model, name)
            del vars(owner)[leaf]
            done.append(name)
            owner.register_buffer(leaf, value, persistent=False)
        yield
    finally:
        for name in done:
            owner, leaf = _owner(model, name)
            owner._buffers.pop(leaf, None)
            owner._non_persistent_buffers_set.discard(leaf)
            vars(owner)[leaf] = attrs[name]


class WithFinals(torch.nn.Module):
    """``inner``'s forward, also returning the final value of each named buffer: under ``functional_call``
    a buffer the forward reassigns is put back on exit, so export would not see the reassignment."""

    def __init__(self, inner: torch.nn.Module, finals: list[str]) -> None:
        super().__init__()
        self.inner = inner
        self._finals = finals

    def forward(self, *inputs: object) -> tuple[object, list[torch.Tensor]]:
        return self.inner(*inputs), [self.inner.get_buffer(name) for name in self._finals]


def user_outputs(graph: Graph, keep: list[int]) -> None:
    """Cut the graph's outputs to those at ``keep`` (the reference's result, not the mutated state's new
    values) and drop what only the others needed."""
    output = next(n for n in graph.nodes if n.op == "output")
    outs = list(output.args[0])
    output.args = (tuple(outs[i] for i in keep),)
    graph.eliminate_dead_code()


def reads_value(graph: Graph, placeholder: Node) -> bool:
    """Whether the graph's outputs depend on the values of ``placeholder`` (not only on its sizes)."""
    tainted = {placeholder}
    for node in graph.nodes:
        if node.op == "output":
            return any(n in tainted for n in _value_inputs(node))
        if node.op == "call_function" and any(n in tainted for n in _value_inputs(node)):
            tainted.add(node)
    return False


def _value_inputs(node: Node) -> list[Node]:
    """The nodes whose values ``node`` reads."""
    if node.target in _METADATA_ONLY:
        return []
    args = node.args[1:] if node.target in _OVERWRITES_FIRST else node.args
    found: list[Node] = []
    torch.fx.node.map_arg((args, node.kwargs), found.append)
    return found


def refuse_carried_state(graph: Graph, changed: dict[str, Node]) -> None:
    """LoweringError where the result reads the value of a state the forward also overwrites."""
    for name, placeholder in changed.items():
        if reads_value(graph, placeholder):
            raise LoweringError(f"the reference carries state across calls: its forward reads {name!r} and then "
                                "overwrites it, so each call's result depends on the calls before it")
