"""The any_op corpus (benchmarks/any_op): every problem loads through the spec loader, is production-sized,
and its shrunk test case runs the reference on the CPU quickly and deterministically."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

from evaluators.candidate import flatten_outputs
from evaluators.spec import load_spec

CORPUS = Path(__file__).parents[1] / "benchmarks" / "any_op"
MINIMUMS = {"level1": 50, "level2": 25, "level3": 5}
PROBLEMS = sorted(CORPUS.glob("level*/*.py"))


def test_each_level_meets_its_minimum_and_the_readme_lists_every_problem() -> None:
    counts = {level: len(list((CORPUS / level).glob("*.py"))) for level in MINIMUMS}
    assert all(counts[level] >= minimum for level, minimum in MINIMUMS.items()), counts
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in PROBLEMS if f"`{p.name}`" not in readme]
    assert not missing, f"README.md does not list {missing}"


def test_every_problem_runs_its_shrunk_case_fast_and_deterministically() -> None:
    slow, failures = [], []
    started = time.perf_counter()
    for path in PROBLEMS:
        name = f"{path.parent.name}/{path.name}"
        try:
            spec = load_spec(path)
            assert spec.shrunk, "production inputs are small: nothing to shrink"
            torch.manual_seed(0)
            (args,) = spec.cases("test").values()
            reference = spec.reference_cls(*spec.init_args("test")).eval()
            with torch.no_grad():
                first = flatten_outputs(reference(*args))
                second = flatten_outputs(reference(*args))
            assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True)), "forward is not deterministic"
            assert all(torch.isfinite(t.float()).all() for t in first), "non-finite output"
            # what keeps the interpreter's checks to seconds is size, not this host's speed: the shrink's caps
            inputs = sum(a.numel() for a in args if isinstance(a, torch.Tensor))
            outputs = sum(t.numel() for t in first)
            if inputs > 100_000 or outputs > 400_000:
                slow.append(f"{name} ({inputs} input, {outputs} output elements)")
        except Exception as exc:  # collect every broken problem, then fail once
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)
    assert not slow, f"shrunk cases over the shrink's size caps: {slow}"
    assert time.perf_counter() - started < 120, "the corpus's shrunk cases should take well under two minutes"


@pytest.mark.parametrize("path", [PROBLEMS[0], CORPUS / "level3" / "05_lstm_sequence.py"], ids=lambda p: p.name)
def test_production_case_keeps_the_written_sizes(path: Path) -> None:
    """Shrinking only touches the test case: GPU targets time the sizes as written (shapes checked on meta)."""
    spec = load_spec(path)
    spec.test_shrink()
    for name, (production, _) in spec.shrunk.items():
        assert getattr(spec.module, name) == production
    prod = spec.cases("prod", "meta")["case0"]
    assert sum(t.numel() for t in prod) > 100 * sum(t.numel() for t in spec.cases("test")["case0"])
