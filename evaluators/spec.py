"""Operator specs (docs/architecture.md §5): a reference module plus its input cases, in our format or KernelBench's."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from evaluators.identity import source_hash
from evaluators.loading import LoadError, load_module, read_source
from evaluators.shrink import Shrink, ShrinkError, plan_shrink, rebound

DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-4, 1e-4),
    torch.float64: (1e-7, 1e-7),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (1e-2, 1e-2),
}

Case = tuple[Any, ...]


class SpecError(Exception):
    """A spec is unusable; the message is one line meant for the user."""


@dataclass
class OperatorSpec:
    path: Path
    name: str
    source_hash: str
    module: ModuleType
    reference_cls: type[torch.nn.Module]
    get_inputs: Callable[..., Any]
    get_test_inputs: Callable[..., Any] | None
    get_init_inputs: Callable[[], Any] | None
    tolerances: dict[torch.dtype, tuple[float, float]] = field(default_factory=dict)
    # Data-dependent ops (a candidate reads a total back to size its outputs) cannot be simulated from a
    # sample of each grid: programs left out write nothing, so the total would be garbage. Such a spec sets
    # SIMULATE_ALL_PROGRAMS = True and the simulator interprets every program (slower, exact).
    simulate_all_programs: bool = False
    # optional ``extra_baselines(reference) -> {name: callable(*inputs)}``: other PyTorch ways to compute
    # the op that a user would compare against, timed interleaved with the candidate and the reference
    extra_baselines: Callable[[torch.nn.Module], dict[str, Callable[..., Any]]] | None = None
    # optional ``MEAN_ABS_ERR = {dtype: bound}``: a second, aggregate check for outputs of that dtype. Where
    # rounding flips force a loose elementwise tolerance (a 16-bit chain of GEMMs and norms), a systematic
    # bug can hide under it element by element but not in the mean over millions of elements.
    mean_abs_err: dict[torch.dtype, float] = field(default_factory=dict)
    # without get_test_inputs, the test case is get_inputs() with the size constants scaled down (shrink.py);
    # planned on first use, since only the CPU interpreter needs it and planning runs the reference
    _plans: dict[str, Shrink | None] = field(default_factory=dict, init=False, repr=False)  # which -> plan

    def init_args(self, which: str = "prod") -> list[Any]:
        """Constructor args; for the ``test`` case of a shrunk spec, built from the shrunk constants."""
        if not self.get_init_inputs:
            return []
        with rebound(self.module, self.shrink_for(which)):
            return list(self.get_init_inputs())

    def cases(self, which: str = "prod", device: str = "cpu") -> dict[str, Case]:
        """``which`` is ``prod`` (get_inputs), ``test`` (get_test_inputs, else get_inputs, shrunk if large) or
        ``sim`` (a simulated target's check: as ``test``, but a shrink keeps the constructor args if it can)."""
        if which != "prod" and self.get_test_inputs:
            return normalize_cases(_call_with_device(self.get_test_inputs, device), self.name)
        with rebound(self.module, self.shrink_for(which)):
            return normalize_cases(_call_with_device(self.get_inputs, device), self.name)

    def shrink_for(self, which: str) -> Shrink | None:
        """The rebinding of the size constants that the ``which`` cases use (None for ``prod``)."""
        if which == "test":
            return self.test_shrink()
        return self.sim_shrink() if which == "sim" else None

    def sim_shrink(self) -> Shrink | None:
        """The test case of a simulated target: the candidate is checked here and estimated at production sizes,
        so sizes it fixes from its constructor args must be the production ones (``plan_shrink(keep_init)``).
        Where no such case fits, the plain test case: a draft that pins a size then refuses in one line."""
        if "sim" not in self._plans:
            try:
                self._plans["sim"] = self._plan(keep_init=True)
            except ShrinkError:
                self._plans["sim"] = self.test_shrink()
        return self._plans["sim"]

    def test_shrink(self) -> Shrink | None:
        """How the test case scales the size constants down (None: not needed); SpecError when impossible."""
        if "test" not in self._plans:
            try:
                self._plans["test"] = self._plan(keep_init=False)
            except ShrinkError as exc:
                raise SpecError(f"spec {self.path.name} cannot be shrunk to a test case: {exc}") from None
        return self._plans["test"]

    def _plan(self, keep_init: bool) -> Shrink | None:
        """None where the spec has its own test inputs; else ``plan_shrink`` (ShrinkError when impossible)."""
        if self.get_test_inputs is not None:
            return None
        return plan_shrink(self.module, self.reference_cls, self.get_inputs, self.get_init_inputs, keep_init)

    @property
    def shrunk(self) -> dict[str, list[Any]]:
        """{constant: [production value, test value]} when the test case was derived by shrinking, else {}."""
        return self.shrunk_for("test")

    def shrunk_for(self, which: str) -> dict[str, list[Any]]:
        """``shrunk`` for the ``which`` cases ({} for ``prod``)."""
        plan = self.shrink_for(which)
        return plan.record() if plan else {}

    def tolerance(self, dtype: torch.dtype) -> tuple[float, float]:
        return self.tolerances.get(dtype, DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0)))

    def flops(self, case: Case) -> float | None:
        fn = getattr(self.module, "FLOPS", None)
        return float(fn(case)) if callable(fn) else None

    def bytes(self, case: Case) -> float | None:
        fn = getattr(self.module, "BYTES", None)
        return float(fn(case)) if callable(fn) else None


def load_spec(path: str | Path) -> OperatorSpec:
    """Import and validate a spec; every failure becomes a one-line ``SpecError``."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"spec file {path} does not exist")
    try:
        text = read_source(path)
        module = load_module(path, "spec")
    except LoadError as exc:
        raise SpecError(f"spec {exc}") from None
    reference = getattr(module, "PytorchModel", None) or getattr(module, "Model", None)
    if not (inspect.isclass(reference) and issubclass(reference, torch.nn.Module)):
        raise SpecError(f"spec {path.name} defines no reference: expected class PytorchModel(nn.Module) or Model")
    get_inputs = getattr(module, "get_inputs", None)
    if not callable(get_inputs):
        raise SpecError(f"spec {path.name} defines no get_inputs() function")
    tolerances = getattr(module, "TOLERANCES", {}) or {}
    if not isinstance(tolerances, dict):
        raise SpecError(f"spec {path.name}: TOLERANCES must be a dict dtype -> (atol, rtol)")
    mean_abs_err = getattr(module, "MEAN_ABS_ERR", {}) or {}
    if not isinstance(mean_abs_err, dict) or not all(isinstance(v, (int, float)) and v > 0
                                                     for v in mean_abs_err.values()):
        raise SpecError(f"spec {path.name}: MEAN_ABS_ERR must be a dict dtype -> positive bound")
    return OperatorSpec(
        path=path.resolve(),
        name=path.stem,
        source_hash=source_hash(text),
        module=module,
        reference_cls=reference,
        get_inputs=get_inputs,
        get_test_inputs=_optional_callable(module, "get_test_inputs"),
        get_init_inputs=_optional_callable(module, "get_init_inputs"),
        tolerances=dict(tolerances),
        mean_abs_err={k: float(v) for k, v in mean_abs_err.items()},
        simulate_all_programs=bool(getattr(module, "SIMULATE_ALL_PROGRAMS", False)),
        extra_baselines=_optional_callable(module, "extra_baselines"),
    )


def normalize_cases(raw: Any, spec_name: str) -> dict[str, Case]:
    """Accept a dict name->tuple, a list of tuples (many cases) or a flat list of tensors (KernelBench)."""
    if isinstance(raw, dict):
        cases = {str(k): tuple(v) if isinstance(v, (list, tuple)) else (v,) for k, v in raw.items()}
    elif isinstance(raw, (list, tuple)):
        if raw and all(isinstance(item, (list, tuple)) for item in raw):
            cases = {f"case{i}": tuple(item) for i, item in enumerate(raw)}
        else:
            cases = {"case0": tuple(raw)}
    else:
        raise SpecError(f"spec {spec_name}: get_inputs() returned {type(raw).__name__}, expected a list or dict")
    if not cases:
        raise SpecError(f"spec {spec_name}: get_inputs() returned no cases")
    return cases


def _call_with_device(fn: Callable[..., Any], device: str) -> Any:
    """``fn(device=...)`` where it takes one; else ``fn()`` with the device as torch's default, so a KernelBench
    ``get_inputs`` (``torch.rand`` on the CPU) builds its tensors on the GPU directly. At published sizes the
    host detour cost seconds and a host copy per call (issue #28). A function that cannot build there (a CPU
    generator object, numpy) is called on the host and its result moved, as before. Values differ between the
    two paths; every process of an evaluation takes the same one, so the judge and the candidate agree."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    if "device" in params:
        return fn(device=device)
    if device != "cpu":
        state = torch.random.get_rng_state(), torch.cuda.get_rng_state_all()
        try:
            with torch.device(device):
                return _move(fn(), device)
        except Exception:  # noqa: BLE001 - rebuilt on the host below, from the same generator state
            torch.random.set_rng_state(state[0])
            torch.cuda.set_rng_state_all(state[1])
    return _move(fn(), device)


def _move(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _move(v, device) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_move(v, device) for v in value)
    return value


def _optional_callable(module: ModuleType, name: str) -> Callable[..., Any] | None:
    fn = getattr(module, name, None)
    return fn if callable(fn) else None
