"""The 160-operator ATen coverage suite (issue #8, part 1) and its offline Triton template lowering.

Public API (kept small and stable for ``ke aten-sweep``)::

    from kernelevolve.aten import SUITE, get_op, render_spec, lower
"""

from kernelevolve.aten.lowering import lower
from kernelevolve.aten.op import AtenOp
from kernelevolve.aten.spec_render import render_spec
from kernelevolve.aten.table import SUITE, get_op

__all__ = ["SUITE", "AtenOp", "get_op", "lower", "render_spec"]
