"""``evaluate``: check and time one candidate on a target, without touching the run store.

``ke eval`` and the MCP server's ``evaluate`` tool both come here, so a candidate is judged the same way
whichever door it came through.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelevolve.api.checks import test_case_shrink
from kernelevolve.api.stores import checked_state, load_op
from kernelevolve.errors import UserError
from kernelevolve.state import ensure_writable

MAX_SEEDS = 16

if TYPE_CHECKING:
    from evaluators.result import EvaluationResult


@dataclass(frozen=True)
class Evaluation:
    """The evaluator's verdict, with the op it was judged against and the candidate file (None: given as text)."""

    result: EvaluationResult
    op: str
    candidate: str | None

    def to_dict(self) -> dict[str, Any]:
        """What ``ke eval --json`` prints: the evaluation with ``op`` and ``candidate`` added."""
        payload = self.result.to_dict()
        payload["op"], payload["candidate"] = self.op, self.candidate
        return payload


def evaluate(op: str, hw: str, candidate: str | Path | None = None, *, source: str | None = None,
             simulate: bool = False, timeout_s: float = 120.0, ncu: bool = False, state_dir: str | None = None,
             store_url: str | None = None, scratch: Path | None = None, seeds: int | None = None) -> Evaluation:
    """Evaluate a candidate (the file ``candidate``, or the text ``source``) against ``op`` on ``hw``.

    The evaluator's scratch files go to the state's scratch folder, or to ``scratch`` when given (the state is
    then neither checked nor created: the MCP server evaluates in a temporary folder). Bad input is a
    ``UserError``; a candidate that fails is a result whose ``status`` is not "ok", not an exception. ``seeds``:
    how many random input seeds correctness is checked on (None: the evaluator's default, as in a search; fewer
    is quicker and weaker)."""
    from interpreters.executor import DeviceUnavailable, LocalExecutor
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.export_cpu import without_cpu_fallback
    from kernelevolve.inputs import source_file

    if (candidate is None) == (source is None):
        raise TypeError("evaluate needs exactly one of candidate (a file) and source (its text)")
    if timeout_s <= 0:
        raise UserError(f"--timeout must be positive, got {timeout_s:g}")
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        raise UserError(f"--seeds must be between 1 and {MAX_SEEDS}, got {seeds}")
    cand_path = None
    if candidate is not None:
        cand_path, source = source_file(candidate, "candidate file")
    source = without_cpu_fallback(source)  # a file exported by `ke best` is checked as the kernel it holds
    paths = checked_state(state_dir, store_url) if scratch is None else None
    spec = load_op(op)
    try:
        target = get_target(hw)
        test_case_shrink(spec, target, simulate)
        if paths is not None:
            ensure_writable(paths.root)
        executor = LocalExecutor(target, paths.scratch if paths is not None else scratch, timeout_s=timeout_s,
                                 simulate=simulate, ncu=ncu, seeds=seeds)
    except (DeviceUnavailable, NotImplementedError) as exc:
        raise UserError(str(exc)) from None
    except UnknownTarget as exc:
        raise UserError(exc.args[0]) from None
    try:
        result = executor.evaluate(spec.path, source)
    finally:
        executor.close()
    return Evaluation(result, spec.name, str(cand_path) if cand_path is not None else None)
