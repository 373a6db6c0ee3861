"""The record describing one ATen operator of the coverage suite (issue #8).

A row says which op and which inputs: the reference call that the rendered spec makes, the input recipe its
cases are built from, and what the spec documents and the matrix groups by (its family, the formula or kind
in ``kernel``, FLOPs, tolerance class). Drafts come from the general lowering (``kernelevolve.lowering``),
which traces the rendered spec like any other; no row carries lowering code. See ``table.py`` for the suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FAMILIES = ("elementwise", "reduction", "scan", "gather", "norm", "layout")
CATEGORIES = ("unary", "binary", "transcendental", "comparison", "logical", "activation", "activation_backward",
              "reduction", "normalization", "indexing", "scan", "other")


@dataclass(frozen=True)
class Arg:
    """One forward argument: its name and the domain its values are drawn from (see ``inputs.DOMAINS``)."""

    name: str
    domain: str = "normal"


@dataclass(frozen=True)
class AtenOp:
    name: str  # "add.Tensor": the ATen overload packet and overload name
    family: str  # the kind of kernel it needs, as the matrix groups ops (FAMILIES)
    category: str  # coverage category (CATEGORIES)
    args: tuple[Arg, ...]  # the reference forward's tensor arguments, in order
    call: str  # the expression the reference forward returns, e.g. "torch.ops.aten.add.Tensor(x, y, alpha=2)"
    dtypes: tuple[str, ...]  # dtypes the case builder tests, first one also used in production cases
    kernel: str = ""  # what the spec's docstring and byte rules say it computes: a formula, a reduction kind
    flops: float = 1.0  # floating-point operations per output element (per input element for reductions)
    tol: str = "default"  # tolerance class (inputs.TOLERANCE_CLASSES)
    bandwidth_bound: bool = True  # expected limiter on a GPU: DRAM bandwidth (False: latency or atomics)
    params: tuple[tuple[str, Any], ...] = field(default=())  # family-specific options

    @property
    def overload(self) -> str:
        return f"aten.{self.name}"

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args)

    def opt(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)

    @property
    def slug(self) -> str:
        """A file-name-safe form of the name: ``add.Tensor`` -> ``add_Tensor``."""
        return self.name.replace(".", "_")


def parse_args(text: str) -> tuple[Arg, ...]:
    """``"x y:nonzero mask:bool"`` -> Args (domain defaults to ``normal``)."""
    out = []
    for token in text.split():
        name, _, domain = token.partition(":")
        out.append(Arg(name, domain or "normal"))
    return tuple(out)
