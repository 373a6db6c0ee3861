"""The correctness protocol (DESIGN §4), split so the reference's outputs never share a process with
the candidate.

``run_candidate`` executes in a child that loads untrusted code: it builds inputs from seeds, runs the
candidate twice per case (the second time on fresh inputs), and applies the dynamic checks. It returns
only the candidate's outputs. ``judge`` executes later, in a separate child that never imports the
candidate: it rebuilds the same inputs from the same seeds, runs the reference and compares.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from evaluators.candidate import (
    CandidateError,
    build_pair,
    flatten_outputs,
    load_candidate_class,
    plain_tensor_problem,
)
from evaluators.exactness import as_exact_as_reference, as_float64
from evaluators.guard import (
    HOST_READ,
    ForwardGuard,
    HostReadLimit,
    install_launch_hooks,
    integrity_fingerprint,
    threads_started,
)
from evaluators.precision import needs_exact, precision_problem
from evaluators.result import CaseResult
from evaluators.spec import Case, OperatorSpec

FRESH_SEED_OFFSET = 7919
TOLERANCE_MISS = "exceeds atol"  # compare's wording for an output outside the fixed tolerance


class Rejected(Exception):
    """A dynamic anti-cheat check failed."""


def make_inputs(spec: OperatorSpec, which: str, device: str, seed: int) -> dict[str, Case]:
    torch.manual_seed(seed)
    return spec.cases(which, device)


def run_candidate(
    spec: OperatorSpec, candidate: str | type[torch.nn.Module], which: str, device: str, seeds: list[int],
    before: tuple[tuple, int] | None = None,
) -> tuple[dict[str, Any], dict[str, list[torch.Tensor]]]:
    """Run the candidate (a file, or its already loaded class) on every case and seed; returns (report,
    outputs keyed 'seed/case/call', left on the device for the judge). ``compile_s`` in the report is the
    first call of each case on the first seed, where Triton compiles (or loads from its cache) the kernels.

    ``before`` is (:func:`machinery_state`) taken before an already loaded class was imported: code that ran
    at import must not escape the integrity and thread checks."""
    install_launch_hooks()
    fingerprint, threads_before = before or machinery_state()
    cls = load_candidate_class(candidate) if isinstance(candidate, (str, Path)) else candidate
    outputs: dict[str, list[torch.Tensor]] = {}
    launches: list[int] = []
    compile_s, started = 0.0, time.monotonic()
    for seed in seeds:
        first = make_inputs(spec, which, device, seed)
        fresh = make_inputs(spec, which, device, seed + FRESH_SEED_OFFSET)
        reference, candidate_model = build_pair(spec, cls, seed, device, which)
        del reference  # only its parameters were needed
        for name, inputs in first.items():
            t0 = time.monotonic()
            out1, n1 = _guarded_call(candidate_model, inputs, name)
            if seed == seeds[0]:
                _sync(device)
                compile_s += time.monotonic() - t0
            kept = [t.detach().clone() for t in out1]
            # The second call reuses the first call's input tensors, refilled with fresh values: a result
            # memoised on object identity or data_ptr then returns stale data and fails the judge.
            second = refill(inputs, fresh[name])
            out2, n2 = _guarded_call(candidate_model, second, name)
            for before, after in zip(kept, out1, strict=False):
                if not _same(before, after):
                    raise Rejected(f"case {name}: output of the first call changed during the second call "
                                   "(a cached or reused output buffer)")
            if seed == seeds[0]:
                _call_again_unwritten(candidate_model, second, name, out1 + out2)
            outputs[f"{seed}/{name}/1"] = [t.detach() for t in out1]
            outputs[f"{seed}/{name}/2"] = [t.detach() for t in out2]
            launches += [n1, n2]
    if integrity_fingerprint() != fingerprint:
        raise Rejected("the candidate modified the evaluator's checking machinery")
    if threads_started() > threads_before:
        raise Rejected("the candidate started a thread (work hidden from the op recorder)")
    _sync(device)
    run_s = time.monotonic() - started - compile_s
    report = {"launches_per_forward": sum(launches) / max(len(launches), 1), "compile_s": round(compile_s, 3),
              "run_s": round(run_s, 3)}
    return report, outputs


def _call_again_unwritten(model: torch.nn.Module, inputs: Case, case: str, earlier: list[torch.Tensor]) -> None:
    """A third call on the second call's inputs, unwritten since: what a timing loop that reused its inputs
    would hand over. An output that lives in an earlier call's output storage is a remembered result (a memo
    keyed on ``data_ptr``, the version counter, ``id()`` or the storage), however it was keyed."""
    again, _ = _guarded_call(model, inputs, case)
    seen = {t.untyped_storage().data_ptr() for t in earlier if t.numel()}
    for j, tensor in enumerate(again):
        if tensor.numel() and tensor.untyped_storage().data_ptr() in seen:
            raise Rejected(f"case {case}: a call on unchanged inputs returned output #{j} in the storage of an "
                           "earlier call's output (a result remembered across calls)")


def _sync(device: str) -> None:
    if device != "cpu":
        torch.cuda.synchronize()


def machinery_state() -> tuple[tuple, int]:
    """What the dynamic checks compare after untrusted code ran: the checking machinery and thread starts."""
    install_launch_hooks()
    return integrity_fingerprint(), threads_started()


def refill(targets: Case, sources: Case) -> Case:
    """The second call's inputs: the first call's tensors refilled in place when the fresh case has the same
    structure, else the fresh case itself. Data-dependent ops (jagged lengths drawn per seed) change sizes or
    scalar arguments between seeds; reusing the buffers is then impossible, and new objects already defeat
    a cache keyed on identity."""
    if not same_structure(targets, sources):
        return sources
    with torch.no_grad():
        for target, source in zip(targets, sources, strict=True):
            if isinstance(target, torch.Tensor):
                target.copy_(source)
    return targets


def same_structure(targets: Case, sources: Case) -> bool:
    """Whether ``sources`` can be copied into ``targets`` in place: same arity, tensors of one shape and dtype,
    other arguments equal (refill, and the timing's input swap: evaluators/fresh_inputs.py)."""
    return len(targets) == len(sources) and all(_same_structure(t, s) for t, s in zip(targets, sources, strict=False))


def _same_structure(target: Any, source: Any) -> bool:
    if isinstance(target, torch.Tensor) or isinstance(source, torch.Tensor):
        return (isinstance(target, torch.Tensor) and isinstance(source, torch.Tensor)
                and target.shape == source.shape and target.dtype == source.dtype)
    try:
        return bool(target == source)
    except Exception:  # noqa: BLE001 - e.g. lists holding tensors: not comparable, so not reusable in place
        return False


def _guarded_call(model: torch.nn.Module, inputs: Case, case: str) -> tuple[list[torch.Tensor], int]:
    snapshot = [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    threads_at_call = threads_started()
    try:
        with torch.no_grad(), ForwardGuard() as guard:
            out = model(*inputs)
    except CandidateError:
        raise
    except HostReadLimit as exc:
        raise Rejected(f"case {case}: forward computed on the host: {HOST_READ} ({exc})") from None
    except Exception as exc:
        raise _classify_exception(exc, case) from None
    flat = flatten_outputs(out)
    problem = plain_tensor_problem(flat)
    if problem:
        raise Rejected(f"case {case}: {problem}")
    if threads_started() > threads_at_call:
        raise Rejected(f"case {case}: forward started a thread (work hidden from the op recorder)")
    bad_ops = guard.disallowed_ops()
    if bad_ops:
        raise Rejected(f"case {case}: forward ran torch compute ops outside Triton kernels: {', '.join(bad_ops)}")
    if guard.launches == 0:
        raise Rejected(f"case {case}: forward launched no Triton kernel")
    for i, (before, after) in enumerate(zip(snapshot, inputs, strict=False)):
        if isinstance(after, torch.Tensor) and not _same(before, after):
            raise Rejected(f"case {case}: forward mutated input #{i}")
    input_storages = {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor) and t.numel()}
    for j, tensor in enumerate(flat):
        if tensor.numel() and tensor.untyped_storage().data_ptr() in input_storages:
            raise Rejected(f"case {case}: output #{j} aliases an input")
    return flat, guard.launches


def _classify_exception(exc: Exception, case: str) -> CandidateError:
    text = f"case {case}: {type(exc).__name__}: {exc}"
    try:
        from triton.compiler.errors import CompilationError
    except ImportError:  # pragma: no cover
        CompilationError = ()  # type: ignore[assignment]  # noqa: N806
    if isinstance(exc, CompilationError) or "CompilationError" in type(exc).__name__:
        return CandidateError("compile_error", text)
    return CandidateError("runtime_error", text)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b) or _nan_equal(a, b))


def _nan_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if not a.is_floating_point():
        return False
    return bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0))
                and torch.equal(a.isnan(), b.isnan()))


References = Callable[[int], dict[str, tuple[list[torch.Tensor], list[torch.Tensor]]]]


def reference_outputs(spec: OperatorSpec, which: str, device: str, seed: int, exact: bool = False
                      ) -> dict[str, tuple[list[torch.Tensor], list[torch.Tensor]]]:
    """case -> (reference outputs on the first inputs, on the fresh inputs) for one seed, on ``device``;
    ``exact``: the module and every floating input in float64 (the judge's second opinion, exactness.py)."""
    cast = as_float64 if exact else (lambda case: case)
    first = make_inputs(spec, which, device, seed)
    fresh = make_inputs(spec, which, device, seed + FRESH_SEED_OFFSET)
    torch.manual_seed(seed)
    reference = spec.reference_cls(*spec.init_args(which)).to(device)
    reference = (reference.double() if exact else reference).eval()
    expected = {}
    with torch.no_grad():
        for name in first:
            expected[name] = ([t.detach() for t in flatten_outputs(reference(*cast(first[name])))],
                              [t.detach() for t in flatten_outputs(reference(*cast(fresh[name])))])
    return expected


def _exact_or_none(spec: OperatorSpec, which: str, device: str, seed: int) -> dict | None:
    try:
        return reference_outputs(spec, which, device, seed, exact=True)
    except Exception:  # noqa: BLE001 - a reference tied to its dtypes simply gets no second opinion
        return None


class _ExactOnDemand:
    """One seed's float64 reference, computed only if an fp32 output asks for it, then kept for the seed."""

    def __init__(self, spec: OperatorSpec, which: str, device: str, seed: int) -> None:
        self.args, self.done, self.exact = (spec, which, device, seed), False, None

    def __call__(self, name: str, index: int) -> list[torch.Tensor] | None:
        if not self.done:
            self.exact, self.done = _exact_or_none(*self.args), True
        return self.exact[name][index] if self.exact and name in self.exact else None


def judge(
    spec: OperatorSpec, which: str, device: str, seeds: list[int], outputs: dict[str, list[torch.Tensor]],
    references: References | None = None,
) -> list[CaseResult]:
    """Compare the candidate's outputs with the reference's, seed by seed, on the device that produced them."""
    references = references or (lambda seed: reference_outputs(spec, which, device, seed))
    results: dict[str, CaseResult] = {}
    for seed in seeds:
        exact_for = _ExactOnDemand(spec, which, device, seed)
        for name, pair in references(seed).items():
            result = results.setdefault(name, CaseResult(name=name, max_abs_err=0.0))
            for index, (call, expected) in enumerate(zip(("1", "2"), pair, strict=True)):
                got = outputs.get(f"{seed}/{name}/{call}")
                ok, err, why = compare(got, expected, spec)
                if not ok and TOLERANCE_MISS in why and any(e.dtype == torch.float32 for e in expected):
                    truth = exact_for(name, index)
                    ok = bool(truth is not None and as_exact_as_reference(got, expected, truth, spec))
                if ok and got is not None and needs_exact(got, expected):  # the precision floor (precision.py)
                    truth = exact_for(name, index)
                    problem = precision_problem(got, expected, truth) if truth is not None else None
                    ok, why = problem is None, problem or ""
                result.max_abs_err = max(result.max_abs_err or 0.0, err)
                if not ok and result.status == "ok":
                    label = "fresh-input call" if call == "2" else "first call"
                    result.status, result.error = "incorrect", f"seed {seed}, {label}: {why}"
    return list(results.values())


def compare(
    got: list[torch.Tensor] | None, expected: list[torch.Tensor], spec: OperatorSpec
) -> tuple[bool, float, str]:
    if got is None:
        return False, float("inf"), "no output recorded"
    if len(got) != len(expected):
        return False, float("inf"), f"returned {len(got)} outputs, reference returns {len(expected)}"
    worst = 0.0
    for i, (g, e) in enumerate(zip(got, expected, strict=False)):
        if g.device != e.device:  # a CPU-built reference judging device outputs, or the reverse
            g = g.to(e.device)
        if g.shape != e.shape:
            return False, float("inf"), f"output #{i} has shape {tuple(g.shape)}, expected {tuple(e.shape)}"
        if g.dtype != e.dtype:
            return False, float("inf"), f"output #{i} has dtype {g.dtype}, expected {e.dtype}"
        if not e.numel():
            continue
        if not (g.is_floating_point() or g.is_complex()):
            if not torch.equal(g, e):
                mismatches = int((g != e).sum())
                return False, float("inf"), f"output #{i}: {mismatches} integer elements differ"
            continue
        atol, rtol = spec.tolerance(e.dtype)
        stats = _float_stats(g, e, atol, rtol)
        if not stats.nan_match:
            return False, float("inf"), f"output #{i}: NaN where the reference has none (unwritten or invalid)"
        err = stats.max_err
        worst = max(worst, err)
        if not stats.close:
            return False, worst, f"output #{i}: max abs error {err:.3g} {TOLERANCE_MISS}={atol:g}, rtol={rtol:g}"
        bound = spec.mean_abs_err.get(e.dtype)
        mean = stats.sum_err / stats.count if stats.count else 0.0
        if bound is not None and stats.count and mean > bound:
            return False, worst, (f"output #{i}: mean abs error {mean:.3g} exceeds the spec's "
                                  f"MEAN_ABS_ERR {bound:g} (each element within atol={atol:g}, rtol={rtol:g})")
    return True, worst, ""


COMPARE_CHUNK = 1 << 24  # elements compared at a time: a float64 copy of a 6 GB output would need 12 GB more


@dataclass
class _Stats:
    nan_match: bool = True
    close: bool = True
    max_err: float = 0.0
    sum_err: float = 0.0
    count: int = 0


def _float_stats(g: torch.Tensor, e: torch.Tensor, atol: float, rtol: float) -> _Stats:
    """NaN agreement, closeness and the absolute errors of one floating output, in float64, a chunk at a time
    (so the judge's memory is bounded by the chunk, not by the output: issue #28)."""
    flat_g, flat_e = g.reshape(-1), e.reshape(-1)
    stats, maxima = _Stats(), []
    for start in range(0, flat_e.numel(), COMPARE_CHUNK):
        g64 = flat_g[start:start + COMPARE_CHUNK].double()
        e64 = flat_e[start:start + COMPARE_CHUNK].double()
        nan = e64.isnan()
        if not torch.equal(g64.isnan(), nan):
            stats.nan_match = False
            return stats
        diff = (g64[~nan] - e64[~nan]).abs()
        if diff.numel():
            maxima.append(diff.max())
            stats.sum_err += float(diff.sum())
            stats.count += diff.numel()
        stats.close = stats.close and torch.allclose(g64, e64, atol=atol, rtol=rtol, equal_nan=True)
    stats.max_err = float(torch.stack(maxima).max()) if maxima else 0.0
    return stats
