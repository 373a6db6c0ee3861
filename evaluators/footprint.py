"""A case's bytes before it runs: its inputs, one call's outputs and the module's parameters, found on the
meta device (no memory, no time).

Why: admission (:mod:`evaluators.admission`) must reserve an evaluation's peak before anything is allocated,
and the peak is a multiple of these bytes (issue #28). The evaluation itself reports the real figure
(``case_bytes`` in a candidate process's report), which the slot keeps for the next node of the same spec.
"""

from __future__ import annotations

from typing import Any

import torch

from evaluators.recurrent_ops import whole_recurrences
from evaluators.spec import OperatorSpec, SpecError, normalize_cases


def case_bytes(spec: OperatorSpec, which: str = "prod") -> int | None:
    """The largest case's bytes, or None when the spec cannot be built on the meta device. A reference with
    no meta kernel for some op is counted as returning as many bytes as its inputs."""
    try:
        with torch.random.fork_rng(devices=[]), torch.device("meta"), torch.no_grad(), whole_recurrences():
            init = spec.init_args(which)
            raw = spec.get_test_inputs() if which != "prod" and spec.get_test_inputs else _meta_inputs(spec, which)
            cases = normalize_cases(raw, spec.name)
            model = spec.reference_cls(*init).eval()
            params = nbytes(list(model.parameters()) + list(model.buffers()))
            sizes = []
            for case in cases.values():
                inputs = nbytes(case)
                try:
                    outputs = nbytes(model(*case))
                except Exception:  # noqa: BLE001 - no meta kernel, or a data-dependent shape
                    outputs = inputs
                sizes.append(inputs + outputs + params)
    except (Exception, SpecError):  # noqa: BLE001 - a spec that needs real data to build its case
        return None
    return max(sizes) if sizes else None


def _meta_inputs(spec: OperatorSpec, which: str) -> Any:
    from evaluators.shrink import rebound

    with rebound(spec.module, spec.shrink_for(which)):
        try:
            return spec.get_inputs(device="meta")
        except TypeError:  # a KernelBench get_inputs() takes no device: the default device is meta here
            return spec.get_inputs()


def nbytes(value: Any) -> int:
    """Bytes of the tensors in a (nested) value; works on meta tensors."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    return 0
