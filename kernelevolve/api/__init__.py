"""The front door: every job KernelEvolve does, as plain functions with plain keyword arguments.

The CLI (``kernelevolve/cli``), the MCP server and the benchmarks call these (and the store's read API); none of
them holds logic of its own. Nothing here prints or knows click: bad input raises ``kernelevolve.errors.
UserError`` with the line ``ke`` prints (exit 2), a run that failed ``RunFailed`` (exit 1), and progress goes
to an optional display factory. Modules are named apart from their functions (``searches.search``), so
``kernelevolve.api.search`` is always the function.
"""

from kernelevolve.api.aten_sweeps import aten_sweep
from kernelevolve.api.campaigns import campaign
from kernelevolve.api.evaluation import Evaluation, evaluate
from kernelevolve.api.exports import Export, export, report
from kernelevolve.api.searches import resume, search
from kernelevolve.api.sweeps import sweep

__all__ = ["Evaluation", "Export", "aten_sweep", "campaign", "evaluate", "export", "report", "resume", "search",
           "sweep"]
