"""Checking a sample of the timed calls' outputs against the reference for the inputs of that call.

Why: correctness is judged on calls the candidate cannot tell from timed ones only if the timed ones are
checked too. A candidate that remembers an earlier answer, returns a buffer it never wrote, or leaves its
work to something that runs outside the timed window passes every untimed check and is fast when timed.
The timing loop (:mod:`evaluators.timing`) picks the sampled calls at random after they ran; this module
says whether one of them returned what the reference returns for the values that call was given.

The contents timed are the ones the judge already checked in full (the timing seed's first and fresh-input
calls), so this check only has to tell a stale or undone output from a correct one: an output within the
spec's tolerance passes, and so does one within ``SLACK`` times the worst error the judge accepted for the
case (an fp32 reduction that passed as exact as the reference, :mod:`evaluators.exactness`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from evaluators.candidate import CandidateError, flatten_outputs, plain_tensor_problem
from evaluators.comparison import TOLERANCE_MISS, compare
from evaluators.seeding import seed_forward
from evaluators.spec import OperatorSpec

SLACK = 2.0


class TimedOutputError(Exception):
    """A sampled timed call returned something other than the reference's result for its inputs."""


def output_check(spec: OperatorSpec, reference: torch.nn.Module, current: Callable[[], tuple[Any, ...]],
                 case: str, judged_err: float | None, counter: dict[str, int]) -> Callable[[Any, int, int], None]:
    """The check for one case's sampled timed calls; ``current()`` gives the inputs the checked call had."""
    bound = SLACK * judged_err if judged_err is not None and judged_err > 0 else 0.0

    def check(output: Any, content: int, rep: int) -> None:
        where = f"case {case}, timed call {rep + 1} (input set {content})"
        try:
            got = flatten_outputs(output)
        except CandidateError as exc:
            raise TimedOutputError(f"{where}: {exc}") from None
        problem = plain_tensor_problem(got)
        if problem:
            raise TimedOutputError(f"{where}: {problem}")
        with torch.no_grad():
            seed_forward(0, 2 + rep)  # the draws the sampled call made (timing.py seeds it alike)
            expected = flatten_outputs(reference(*current()))
        ok, err, why = compare(got, expected, spec)
        del expected
        if not ok and not (TOLERANCE_MISS in why and err <= bound):
            raise TimedOutputError(f"{where}: the output is not the reference's for that call's inputs (a stale or "
                                   f"remembered result, or work left undone): {why}")
        counter[case] = counter.get(case, 0) + 1

    return check
