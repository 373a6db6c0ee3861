"""Shape-aware export of a run's winners, as the paper deploys kernels: each measured case goes to the node
that was fastest there, and to PyTorch itself where no node beat eager.

The decision uses the run's re-measured final evaluations when there are any (search-time numbers carry
selection bias), else the nodes' own evaluations. Why per case rather than one winner: fitness is a geomean
over cases, so a kernel that is 2.5x on fp16 and 0.5x on fp32 loses the run to a kernel that is 0.7x on
both, while the right deployment is the first kernel on fp16 and PyTorch on fp32. Inputs whose shapes and
dtypes match no measured case go to the overall best node: it was checked correct on every case. The
exported files are plain Python with no KernelEvolve import: the kernels, a copy of the op's reference, and
a dispatcher that loads them from its own folder.

The other formats (``--format torch-library``, ``--format kernelbench``; one module each) render the same
plan and the same signature -> node table (``route_table``), so every format routes a call identically.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from kernelevolve.export_cpu import CPU_NOTE, with_cpu_fallback
from kernelevolve.export_plan import ExportPlan, listing, route_table, wrapped
from kernelevolve.export_runtime import signature

FORMATS = ("dispatch", "torch-library", "kernelbench")

DISPATCH_TEMPLATE = '''"""Shape-aware dispatch exported by `ke best`: run {run_id}, op {op} on {hw}.

Timings from {timings_from}. Measured cases routed to a Triton kernel (the node fastest there):
{won}
PyTorch (the op's reference, {reference_file}) is used where no kernel was faster than eager:
{lost}
Inputs whose shapes and dtypes match no measured case go to node {default_node} ({default_file}), the
overall best, checked correct on every case.

{cpu_note}
"""

import importlib.util
import sys
from pathlib import Path

import torch
import torch.nn as nn

_HERE = Path(__file__).resolve().parent
KERNEL_FILES = {kernel_files!r}  # node id -> its kernel file
# input signature -> node id, or None for PyTorch; signatures not listed go to DEFAULT_NODE
ROUTES = {routes!r}
DEFAULT_NODE = {default_node!r}


def _load(file_name):
    path = _HERE / file_name
    spec = importlib.util.spec_from_file_location("_ke_export_" + path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's jit reads kernel source through the module's file
    spec.loader.exec_module(module)
    return module


_kernels = {{node: _load(name) for node, name in KERNEL_FILES.items()}}
_reference = _load({reference_file!r})


{signature_source}

def _tie(module, owner_of_params):
    """``module`` uses ``owner_of_params``'s parameters (same names), so one set of weights drives every path."""
    params = dict(owner_of_params.named_parameters())
    for name, _ in list(module.named_parameters()):
        if name in params:
            owner, _, leaf = name.rpartition(".")
            setattr(module.get_submodule(owner) if owner else module, leaf, params[name])


class DispatchModel(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.kernels = nn.ModuleDict()
        for node, module in _kernels.items():
            cls = getattr(module, "TritonModel", None) or getattr(module, "ModelNew")
            self.kernels[str(node)] = cls(*args, **kwargs)
        reference_cls = getattr(_reference, "PytorchModel", None) or getattr(_reference, "Model")
        self.reference = reference_cls(*args, **kwargs)
        primary = self.kernels[str(DEFAULT_NODE)]
        for name, kernel in self.kernels.items():
            if name != str(DEFAULT_NODE):
                _tie(kernel, primary)
        _tie(self.reference, primary)
        self.last_route = None

    def forward(self, *args):
        node = ROUTES.get(signature(args), DEFAULT_NODE)
        if node is None:
            self.last_route = "pytorch"
            return self.reference(*args)
        self.last_route = f"node {{node}}"
        return self.kernels[str(node)](*args)


TritonModel = DispatchModel
'''


def kernel_file_name(stem: str, node_id: int, default_node: int) -> str:
    return f"{stem}_kernel.py" if node_id == default_node else f"{stem}_node{node_id}.py"


def export(out: Path, sources: dict[int, str], spec_path: Path, plan: ExportPlan, run_id: str, op: str,
           hw: str, fmt: str = "dispatch") -> ExportPlan:
    """Render ``plan`` in format ``fmt`` (one of ``FORMATS``) at ``out``; see ``export_dispatch`` and the
    ``kernelevolve.export_torch_library`` and ``kernelevolve.export_kernelbench`` modules."""
    if fmt == "torch-library":
        from kernelevolve.export_torch_library import export_torch_library

        return export_torch_library(out, sources, spec_path, plan, run_id, op, hw)
    if fmt == "kernelbench":
        from kernelevolve.export_kernelbench import export_kernelbench

        return export_kernelbench(out, sources, spec_path, plan, run_id, op, hw)
    if fmt != "dispatch":
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return export_dispatch(out, sources, spec_path, plan, run_id, op, hw)


def export_dispatch(out: Path, sources: dict[int, str], spec_path: Path, plan: ExportPlan, run_id: str, op: str,
                    hw: str) -> ExportPlan:
    """Write the default node's kernel to ``out`` when it serves every case; otherwise ``out`` becomes the
    dispatcher, and the kernels and the reference go next to it (``<stem>_kernel.py`` for the default node,
    ``<stem>_node<N>.py`` for the others, ``<stem>_reference.py``)."""
    if not plan.lost and plan.kernel_nodes == [plan.default_node]:
        out.write_text(with_cpu_fallback(sources[plan.default_node]), encoding="utf-8")
        plan.files = [str(out)]
        plan.kernel_files = {plan.default_node: str(out)}
        return plan
    files = {node: kernel_file_name(out.stem, node, plan.default_node) for node in plan.kernel_nodes}
    reference_file = f"{out.stem}_reference.py"
    for node, name in files.items():
        (out.parent / name).write_text(with_cpu_fallback(sources[node]), encoding="utf-8")
    (out.parent / reference_file).write_text(spec_path.read_text(encoding="utf-8"), encoding="utf-8")
    routes = route_table(plan, spec_path)
    out.write_text(DISPATCH_TEMPLATE.format(
        signature_source=inspect.getsource(signature), run_id=run_id, op=op, hw=hw, timings_from=plan.timings_from,
        kernel_files=files, routes=routes,
        default_node=plan.default_node, default_file=files[plan.default_node], reference_file=reference_file,
        won=listing(plan.won), lost=listing(plan.lost), cpu_note=wrapped(CPU_NOTE)), encoding="utf-8")
    plan.files = [str(out)] + [str(out.parent / name) for name in files.values()] + [str(out.parent / reference_file)]
    plan.kernel_files = {node: str(out.parent / name) for node, name in files.items()}
    return plan
