"""Defence in depth: with the static checks switched off, the run-time checks alone still reject these
cheats. Each row names the dynamic mechanism it proves (the static rules catch them first in real use)."""

from __future__ import annotations

from pathlib import Path

import pytest

from interpreters.sandbox import EvaluationWorker

ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = Path(__file__).parent / "candidates"

CASES = [
    # (file, op, expected status, reason fragment, mechanism)
    ("kernel_body__torch_in_jit", "swish", "rejected", "forward ran torch compute ops", "ops recorded inside launches"),
    ("torch_compute__tensor_method", "swish", "rejected", "forward ran torch compute ops", "ATen op recorder"),
    ("threads__threading", "swish", "rejected", "thread", "thread count around forward"),
    ("introspection__patch_guard_class", "swish", "rejected", "modified the evaluator's checking machinery",
     "integrity fingerprint"),
    ("output_caching__memo_data_ptr", "swish", "rejected", "result remembered across calls", "unwritten third call"),
    ("partial_write__first_half", "swish", "incorrect", "NaN where the reference has none", "NaN poisoning"),
]


@pytest.fixture(scope="module")
def worker():
    with EvaluationWorker({"TRITON_INTERPRET": "1"}) as w:
        yield w


@pytest.mark.parametrize(("name", "op", "status", "fragment", "mechanism"), CASES, ids=[c[0] for c in CASES])
def test_dynamic_checks_alone(worker, name: str, op: str, status: str, fragment: str, mechanism: str) -> None:
    path = CANDIDATES / f"{name}.py"
    if not path.exists():
        pytest.fail(f"corpus file {name} is missing")
    result = worker.evaluate({"spec_path": str(ROOT / "kernelevolve" / "builtin_specs" / f"{op}.py"),
                              "candidate_path": str(path), "device": "cpu", "target": "cpu", "timeout_s": 20,
                              "static_checks": False})
    assert result.status == status, f"{mechanism}: {result.status}: {result.reason}"
    assert fragment in result.reason, f"{mechanism}: {result.reason}"
