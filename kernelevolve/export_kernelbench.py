"""``ke best --format kernelbench``: the run's routes as one self-contained file defining
``class ModelNew(nn.Module)``, the layout KernelBench's harness loads next to the original problem file.

ModelNew subclasses the reference (the spec the run used, kept inline), so its constructor and forward take
the reference's arguments, it creates the same parameters in the same order (KernelBench seeds before
building Model and before building ModelNew, and compares them with no weight copying) and its state_dict
has the reference's keys. Each node's kernel file and the reference are kept as source text and imported
into a namespace of their own: two nodes' files define the same names (``TritonModel``, ``BLOCK_SIZE``,
their ``@triton.jit`` functions), and a candidate may itself define ``ModelNew``. Routing is the dispatch
export's signature table; the run-time helpers are ``kernelevolve.export_runtime``, inlined.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from evaluators.source_tree import parse_source
from kernelevolve import export_runtime
from kernelevolve.export_cpu import CPU_NOTE, PREAMBLE
from kernelevolve.export_plan import ExportPlan, route_listing, route_table, wrapped

FILE_TEMPLATE = '''"""KernelBench ModelNew exported by `ke best`: run {run_id}, op {op} on {hw}.

{listing}

ModelNew subclasses the op's reference (REFERENCE_SOURCE below): same constructor and forward arguments, same
parameters created in the same order, same state_dict keys. Each kernel runs with ModelNew's own parameters
and buffers; the kernels and the reference are kept below as source text, each imported into a namespace of
its own.

{cpu_note}
"""

{preamble}
# --- run-time helpers (kernelevolve.export_runtime) ---
{runtime}
# --- the run's kernels (node id -> its file) and the op's reference ---
KERNEL_SOURCES = {{
{kernel_sources}
}}

REFERENCE_SOURCE = {reference_source}

# input signature -> node id, or None for PyTorch; signatures not listed go to DEFAULT_NODE
ROUTES = {routes!r}
DEFAULT_NODE = {default_node!r}

_reference = module_from_source("_ke_{run_id}_reference", REFERENCE_SOURCE)
_kernel_classes = {{}}
for _node, _source in KERNEL_SOURCES.items():
    _module = module_from_source(f"_ke_{run_id}_node{{_node}}", _source)
    _kernel_classes[_node] = getattr(_module, "TritonModel", None) or getattr(_module, "ModelNew")
Reference = getattr(_reference, "PytorchModel", None) or getattr(_reference, "Model")


class ModelNew(Reference):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)  # the reference's parameters, from the same random numbers
        lent = set(named_tensors(self))
        # not submodules: the state_dict stays the reference's, and the kernels run with these tensors
        self.__dict__["_ke_kernels"] = {{node: NodeModule(cls, args, kwargs, lent)
                                        for node, cls in _kernel_classes.items()}}
        self.last_route = None  # "node N" or "pytorch": where the latest call went

    def forward(self, *args):
        node = ROUTES.get(signature(args), DEFAULT_NODE)
        if node is None:
            self.last_route = "pytorch"
            return super().forward(*args)
        self.last_route = f"node {{node}}"
        return self._ke_kernels[node](named_tensors(self), args)
'''


def source_literal(text: str) -> str:
    """``text`` as a Python literal that reads like the code it holds: a raw triple-quoted string where that
    round-trips exactly, else ``repr``."""
    candidate = "r'''" + text + "'''"
    try:
        if "'''" not in text and not text.endswith("\\") and ast.literal_eval(candidate) == text:
            return candidate
    except (SyntaxError, ValueError):
        pass
    return repr(text)


def runtime_body() -> str:
    """``export_runtime``'s code without its docstring and ``__future__`` import, which must open a file."""
    source = inspect.getsource(export_runtime)
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    for stmt in parse_source(source).body:
        is_doc = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
            stmt.value.value, str)
        if is_doc or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            drop.update(range(stmt.lineno - 1, stmt.end_lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop).strip() + "\n"


def export_kernelbench(out: Path, sources: dict[int, str], spec_path: Path, plan: ExportPlan, run_id: str,
                       op: str, hw: str) -> ExportPlan:
    """Write ``out``: every node some route uses (the default node first), the reference and ``ModelNew``."""
    routes = route_table(plan, spec_path)
    kernels = ",\n".join(f"    {node}: {source_literal(sources[node])}" for node in plan.kernel_nodes)
    out.write_text(FILE_TEMPLATE.format(
        run_id=run_id, op=op, hw=hw, listing=route_listing(plan), runtime=runtime_body(), kernel_sources=kernels,
        reference_source=source_literal(spec_path.read_text(encoding="utf-8")), routes=routes,
        default_node=plan.default_node, cpu_note=wrapped(CPU_NOTE), preamble=PREAMBLE), encoding="utf-8")
    plan.files = [str(out)]
    plan.kernel_files = {node: str(out) for node in plan.kernel_nodes}
    return plan
