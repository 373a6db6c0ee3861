"""Knowledge-base code samples for rmsnorm, layernorm, matmul, gelu, add_bias_relu and sum_rows are correct.

Each sample goes through the real ``ke eval`` on the cpu target: the sandboxed worker, the static and dynamic
anti-cheat checks, Triton's CPU interpreter on the spec's test cases with three seeds and a second call on
fresh inputs, judged against the reference in a separate process. A wrong sample would be copied into every
search that drafts from it. The samples for swish, softmax and conv1d are covered by test_seed_kernels.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT
from helpers.kb_coverage import CASE_STUDY_OPS, EVAL_SAMPLES, SEED_SAMPLES

from evaluators.spec import load_spec
from kernelevolve.builtin_specs import resolve_op
from kernelevolve.knowledge.samples import front_matter
from kernelevolve.operators.tunables import find_tunables, neighbours

SAMPLES = Path(REPO_ROOT) / "knowledge_base" / "code_samples"

EXPECTED = EVAL_SAMPLES  # sample file -> (op, the tunables the offline operator must find in it)
# Samples whose `ke eval` took more than ~20 s on a busy 2-core machine (23-27 s; the others 16-20 s, of
# which ~12 s is starting the CLI and its sandboxed workers: a trivial swish eval took 18 s there).
SLOW = {"layernorm_looped.py", "matmul_tiled.py", "matmul.py"}


def _params():
    for sample, (op, _) in EXPECTED.items():
        marks = [pytest.mark.slow] if sample in SLOW else []
        yield pytest.param(op, sample, id=sample.removesuffix(".py"), marks=marks)


def test_every_code_sample_is_run_by_a_test() -> None:
    """Each knowledge-base sample is run on the interpreter by this file, test_seed_kernels.py or
    test_case_study_ops.py, so CI's ``ke kb check --no-samples`` loses nothing; a new sample must join one."""
    samples = sorted(SAMPLES.glob("*.py"))
    assert len(samples) >= 20
    by_op = {path.name: front_matter(path.read_text(encoding="utf-8")).get("op") for path in samples}
    unrun = [name for name, op in by_op.items()
             if name not in EVAL_SAMPLES and name.removesuffix(".py") not in SEED_SAMPLES and op not in CASE_STUDY_OPS]
    assert unrun == [], f"knowledge-base samples no test runs: {unrun}"


@pytest.mark.parametrize("op,sample", list(_params()))
def test_sample_passes_cpu_eval(ke, tmp_path: Path, op: str, sample: str) -> None:
    result = ke("eval", "--op", op, "--hw", "cpu", str(SAMPLES / sample), "--json", "--state-dir", str(tmp_path / "s"))
    assert result.stdout, result.stderr
    payload = result.json()
    assert payload["status"] == "ok", f"{sample}: {payload['status']}: {payload.get('reason')}"
    assert result.returncode == 0, result.stderr
    assert payload["cases"] and all(c["status"] == "ok" for c in payload["cases"]), payload["cases"]


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_sample_names_its_op_and_exposes_mutable_tunables(sample: str) -> None:
    op, expected = EXPECTED[sample]
    source = (SAMPLES / sample).read_text(encoding="utf-8")
    meta = front_matter(source)
    assert meta.get("op") == op and meta.get("title") and meta.get("hardware") and meta.get("tags")
    tunables = [t for t in find_tunables(source) if t.name.isupper()]  # the module constants, not launch kwargs
    assert {t.name for t in tunables} == expected
    assert all(neighbours(t) for t in tunables), "every tunable needs a value the mutator can step to"


@pytest.mark.parametrize("op", sorted({op for op, _ in EXPECTED.values()}))
def test_spec_loads_and_reports_work(op: str) -> None:
    spec = load_spec(resolve_op(op))
    assert spec.name == op and spec.get_test_inputs is not None
    reference = spec.reference_cls(*spec.init_args())
    for name, case in spec.cases("test").items():
        out = reference(*case)
        assert out.dtype == case[0].dtype, name
        assert spec.tolerance(out.dtype) != (0.0, 0.0), f"{name}: no tolerance for {out.dtype}"
        assert spec.flops(case) > 0 and spec.bytes(case) > 0, name
