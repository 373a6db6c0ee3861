"""The 160-operator ATen coverage suite (issue #8, part 1): which ops, on which inputs.

Its drafts come from the general lowering (``kernelevolve.lowering``, one draft per input structure).
Public API (kept small and stable for ``ke aten-sweep``)::

    from kernelevolve.aten import SUITE, get_op, render_spec
"""

from kernelevolve.aten.op import AtenOp
from kernelevolve.aten.spec_render import render_spec
from kernelevolve.aten.table import SUITE, get_op

__all__ = ["SUITE", "AtenOp", "get_op", "render_spec"]
