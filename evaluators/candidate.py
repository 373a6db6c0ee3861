"""Loading a candidate file and building it next to the reference, with parameters copied by name."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import torch

from evaluators.loading import LoadError, load_module
from evaluators.spec import OperatorSpec


class CandidateError(Exception):
    """The candidate cannot be built; ``status`` is the evaluation status it maps to."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


def load_candidate_class(path: Path) -> type[torch.nn.Module]:
    from evaluators.guard import register_candidate_file

    register_candidate_file(path)  # before its import runs: a thread started at import is the candidate's
    try:
        module = load_module(Path(path), "cand")
    except LoadError as exc:
        raise CandidateError("compile_error", str(exc)) from None
    cls = getattr(module, "TritonModel", None) or getattr(module, "ModelNew", None)
    if not (inspect.isclass(cls) and issubclass(cls, torch.nn.Module)):
        raise CandidateError("compile_error", "candidate defines no class TritonModel(nn.Module) (or ModelNew)")
    return cls


def build_pair(
    spec: OperatorSpec, cand_cls: type[torch.nn.Module], seed: int, device: str, which: str = "prod"
) -> tuple[torch.nn.Module, torch.nn.Module]:
    """Build reference and candidate from the same seed, then copy the reference's state by name.

    Copying by name (not by position) lets a candidate hold extra buffers or omit parameters it does
    not need, while guaranteeing that every parameter it shares with the reference has its values.
    ``which`` picks the case set the pair will run: a shrunk test case has shrunk constructor args.
    """
    args = spec.init_args(which)
    torch.manual_seed(seed)
    reference = spec.reference_cls(*args).to(device).eval()
    torch.manual_seed(seed)
    try:
        candidate = cand_cls(*args)
    except Exception as exc:
        raise CandidateError("runtime_error", f"TritonModel(...) failed: {type(exc).__name__}: {exc}") from None
    candidate = candidate.to(device).eval()
    copy_state_by_name(reference, candidate)
    return reference, candidate


def copy_state_by_name(source: torch.nn.Module, target: torch.nn.Module) -> None:
    target_state = target.state_dict()
    with torch.no_grad():
        for name, value in source.state_dict().items():
            if name not in target_state:
                continue
            dest = target_state[name]
            if dest.shape != value.shape:
                raise CandidateError(
                    "runtime_error",
                    f"parameter {name} has shape {tuple(dest.shape)}, reference has {tuple(value.shape)}",
                )
            dest.copy_(value.to(dest.dtype))


def flatten_outputs(out: Any) -> list[torch.Tensor]:
    """Outputs may be a tensor or a (nested) tuple/list of tensors; compare them in order."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        flat: list[torch.Tensor] = []
        for item in out:
            flat.extend(flatten_outputs(item))
        return flat
    raise CandidateError("incorrect", f"forward returned {type(out).__name__}, expected tensor(s)")


def plain_tensor_problem(outputs: list[torch.Tensor]) -> str | None:
    """Why an output is not a plain tensor (a subclass can compute when read, after the timer stopped)."""
    for i, tensor in enumerate(outputs):
        if type(tensor) is not torch.Tensor:
            return f"output #{i} is a {type(tensor).__name__}, not a plain torch.Tensor (a lazy or deferred output)"
    return None
