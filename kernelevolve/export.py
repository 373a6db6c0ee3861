"""Shape-aware export of a run's winner, as the paper deploys kernels: the Triton kernel on the cases where it
was measured faster than PyTorch eager, PyTorch itself on the cases where it was not.

The decision uses the run's re-measured final evaluation when there is one (search-time numbers carry
selection bias), else the node's own evaluation. Inputs whose shapes and dtypes match no measured case go to
the kernel: it was checked correct on every case, and the losing shapes are the known exceptions. The exported
files are plain Python with no KernelEvolve import: the kernel, a copy of the op's reference, and a
dispatcher that loads both from its own folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DISPATCH_TEMPLATE = '''"""Shape-aware dispatch exported by `ke best`: run {run_id}, node {node_id}, op {op} on {hw}.

Timings from {timings_from}. The Triton kernel ({kernel_file}) is used on the measured cases it won:
{won}
PyTorch (the op's reference, {reference_file}) is used where the kernel was not faster than eager:
{lost}
Inputs whose shapes and dtypes match no measured case go to the kernel.
"""

import importlib.util
import sys
from pathlib import Path

import torch
import torch.nn as nn

_HERE = Path(__file__).resolve().parent
# input signature -> why PyTorch is used there
FALLBACK = {fallback!r}


def _load(file_name):
    path = _HERE / file_name
    spec = importlib.util.spec_from_file_location("_ke_export_" + path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's jit reads kernel source through the module's file
    spec.loader.exec_module(module)
    return module


_kernel = _load({kernel_file!r})
_reference = _load({reference_file!r})


def signature(args):
    return tuple((tuple(a.shape), str(a.dtype)) if isinstance(a, torch.Tensor) else repr(a) for a in args)


def _tie(reference, kernel):
    """The reference uses the kernel's parameters (same names), so one set of weights drives both paths."""
    params = dict(kernel.named_parameters())
    for name, _ in list(reference.named_parameters()):
        if name in params:
            owner, _, leaf = name.rpartition(".")
            setattr(reference.get_submodule(owner) if owner else reference, leaf, params[name])


class DispatchModel(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        kernel_cls = getattr(_kernel, "TritonModel", None) or getattr(_kernel, "ModelNew")
        reference_cls = getattr(_reference, "PytorchModel", None) or getattr(_reference, "Model")
        self.kernel = kernel_cls(*args, **kwargs)
        self.reference = reference_cls(*args, **kwargs)
        _tie(self.reference, self.kernel)
        self.last_route = None

    def forward(self, *args):
        if signature(args) in FALLBACK:
            self.last_route = "pytorch"
            return self.reference(*args)
        self.last_route = "kernel"
        return self.kernel(*args)


TritonModel = DispatchModel
'''


@dataclass
class ExportPlan:
    won: list[tuple[str, float]] = field(default_factory=list)  # (case, speedup vs eager)
    lost: list[tuple[str, float]] = field(default_factory=list)
    untimed: bool = False
    timings_from: str = ""
    files: list[str] = field(default_factory=list)


def plan_dispatch(evaluation: dict[str, Any]) -> ExportPlan:
    """Which measured cases the kernel won (faster than eager) and which it lost."""
    plan = ExportPlan()
    for case in evaluation.get("cases", []):
        latency, eager = case.get("latency_ms"), case.get("eager_ms")
        if not latency or not eager:
            continue
        (plan.won if eager / latency > 1.0 else plan.lost).append((case["name"], eager / latency))
    plan.untimed = not (plan.won or plan.lost)
    plan.timings_from = ("a simulation (" + str(evaluation.get("target")) + ")" if evaluation.get("simulated")
                         else "timed on " + str((evaluation.get("extra") or {}).get("gpu", {}).get("name")
                                                or evaluation.get("target")))
    return plan


def case_signatures(spec_path: Path) -> dict[str, tuple]:
    """Each production case's input signature, from meta tensors (no data is made)."""
    from evaluators.spec import load_spec

    spec = load_spec(spec_path)
    out = {}
    for name, args in spec.cases("prod", "meta").items():
        out[name] = tuple((tuple(a.shape), str(a.dtype)) if hasattr(a, "shape") and hasattr(a, "dtype")
                          else repr(a) for a in args)
    return out


def export(out: Path, kernel_source: str, spec_path: Path, evaluation: dict[str, Any], run_id: str,
           node_id: int, op: str, hw: str) -> ExportPlan:
    """Write the kernel to ``out``; when some case lost, ``out`` becomes the dispatcher and the kernel and
    the reference go next to it as ``<stem>_kernel.py`` and ``<stem>_reference.py``."""
    plan = plan_dispatch(evaluation)
    if not plan.lost:
        out.write_text(kernel_source, encoding="utf-8")
        plan.files = [str(out)]
        return plan
    signatures = case_signatures(spec_path)
    kernel_file, reference_file = f"{out.stem}_kernel.py", f"{out.stem}_reference.py"
    fallback = {signatures[name]: f"{name}: kernel {speedup:.2f}x vs eager" for name, speedup in plan.lost
                if name in signatures}
    (out.parent / kernel_file).write_text(kernel_source, encoding="utf-8")
    (out.parent / reference_file).write_text(spec_path.read_text(encoding="utf-8"), encoding="utf-8")

    def listing(rows: list[tuple[str, float]]) -> str:
        return "\n".join(f"  - {name} ({speedup:.2f}x vs eager)" for name, speedup in rows) or "  (none)"

    out.write_text(DISPATCH_TEMPLATE.format(
        run_id=run_id, node_id=node_id, op=op, hw=hw, timings_from=plan.timings_from, kernel_file=kernel_file,
        reference_file=reference_file, won=listing(plan.won), lost=listing(plan.lost), fallback=fallback),
        encoding="utf-8")
    plan.files = [str(out), str(out.parent / kernel_file), str(out.parent / reference_file)]
    return plan
