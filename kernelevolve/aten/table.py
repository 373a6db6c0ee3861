"""The 160-operator ATen coverage suite (issue #8) as data: ``SUITE`` and ``get_op``.

Rows live in the ``table_*`` modules by family; this module only assembles them and checks the suite's
invariants (exactly 160 ops, unique names, every required category covered) at import time.
"""

from __future__ import annotations

from kernelevolve.aten.op import CATEGORIES, FAMILIES, AtenOp
from kernelevolve.aten.table_activation import ACTIVATIONS
from kernelevolve.aten.table_elementwise import ELEMENTWISE
from kernelevolve.aten.table_index import GATHERS, LAYOUTS, NORMS
from kernelevolve.aten.table_reduce import REDUCTIONS, SCANS

SUITE_SIZE = 160
SUITE: tuple[AtenOp, ...] = ELEMENTWISE + ACTIVATIONS + REDUCTIONS + SCANS + NORMS + GATHERS + LAYOUTS
_BY_NAME = {op.name: op for op in SUITE}


def get_op(name: str) -> AtenOp:
    """The op named ``name`` (``add.Tensor``), or its overload (``aten.add.Tensor``); KeyError otherwise."""
    key = name.removeprefix("aten.")
    if key not in _BY_NAME:
        raise KeyError(f"no ATen op {name!r} in the suite")
    return _BY_NAME[key]


def _check() -> None:
    if len(SUITE) != SUITE_SIZE or len(_BY_NAME) != SUITE_SIZE:
        raise AssertionError(f"the suite has {len(SUITE)} ops ({len(_BY_NAME)} unique), expected {SUITE_SIZE}")
    for op in SUITE:
        if op.family not in FAMILIES or op.category not in CATEGORIES:
            raise AssertionError(f"{op.name}: unknown family {op.family!r} or category {op.category!r}")
    missing = set(CATEGORIES) - {op.category for op in SUITE}
    if missing:
        raise AssertionError(f"categories without an op: {sorted(missing)}")


_check()
