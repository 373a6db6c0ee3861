"""Checks shared by search, campaign, sweep, aten-sweep and evaluate: each refuses bad input in one line
(``UserError``) before any executor starts or any run is stored (issue #30)."""

from __future__ import annotations

import os

from kernelevolve.errors import UserError

OPERATORS = ("offline", "anthropic", "openai")


def reject_unsupported(concurrency: int, operator_name: str, model: str | None, max_cost: float | None) -> None:
    """Options no run could use: refused before anything is written."""
    if concurrency < 1:
        raise UserError(f"--concurrency must be at least 1, got {concurrency}")
    if operator_name not in OPERATORS:
        raise UserError(f"unknown operator '{operator_name}' (known: {', '.join(OPERATORS)})")
    if operator_name == "offline" and model is not None:
        raise UserError("--model needs an LLM operator (--operator anthropic or openai)")
    if max_cost is not None and max_cost <= 0:
        raise UserError(f"--max-cost must be positive, got {max_cost}")
    if operator_name == "anthropic" and not os.environ.get("ANTHROPIC_API_KEY"):
        raise UserError("--operator anthropic needs ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint)")
    if operator_name == "openai" and not os.environ.get("OPENAI_BASE_URL"):
        raise UserError("--operator openai needs OPENAI_BASE_URL (an OpenAI-compatible endpoint) and OPENAI_API_KEY")


def test_case_shrink(spec, target, simulate: bool) -> dict:
    """On the CPU interpreter, a spec without get_test_inputs is checked on its production inputs scaled down:
    plan that now, so a file that cannot be shrunk is refused before anything is written (SpecError)."""
    from evaluators.spec import SpecError

    if target.runs_on_device(simulate):
        return {}
    try:
        return spec.shrunk
    except SpecError as exc:
        raise UserError(str(exc)) from None



def check_drafts(spec, target: str) -> None:
    """The offline operator drafts from the op's samples or the template lowering of its reference: an op with
    neither is refused in one line now, not after an executor started and a run was stored to fail."""
    from kernelevolve.operators.base import OperatorError
    from kernelevolve.operators.offline import OfflineOperator

    try:
        OfflineOperator().samples(spec.name, spec.path.read_text(encoding="utf-8"), target)
    except OperatorError as exc:
        raise UserError(str(exc)) from None


def check_target(target, simulate) -> None:
    """Refuse a device target this host cannot serve, with the hint (exit 2, nothing written)."""
    from interpreters.executor import DeviceUnavailable, worker_settings

    try:
        worker_settings(target, simulate)
    except (DeviceUnavailable, NotImplementedError) as exc:
        raise UserError(str(exc)) from None
