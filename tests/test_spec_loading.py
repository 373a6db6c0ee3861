"""Spec loading: our format and KernelBench's, and every malformed spec fails with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evaluators.spec import SpecError, load_spec, normalize_cases
from kernelevolve.ops import builtin_ops, resolve_op

SPECS = Path(__file__).parent / "specs"


@pytest.mark.parametrize("op", ["swish", "softmax", "conv1d"])
def test_builtin_specs_load_with_named_test_cases(op: str) -> None:
    spec = load_spec(resolve_op(op))
    assert spec.name == op
    cases = spec.cases("test")
    assert cases and all(isinstance(name, str) and isinstance(args, tuple) for name, args in cases.items())
    ref = spec.reference_cls(*spec.init_args())
    for args in cases.values():
        assert isinstance(ref(*args), torch.Tensor)


def test_kernelbench_format_is_one_case() -> None:
    spec = load_spec(SPECS / "kernelbench_swish.py")
    assert spec.reference_cls.__name__ == "Model"
    cases = spec.cases("test")  # no get_test_inputs: falls back to get_inputs
    assert list(cases) == ["case0"]
    assert cases["case0"][0].shape == (2, 777)


def test_list_of_tuples_is_many_cases_and_device_keyword_is_used() -> None:
    spec = load_spec(SPECS / "multi_case_list.py")
    cases = spec.cases("prod", device="cpu")
    assert list(cases) == ["case0", "case1"]
    assert cases["case1"][0].shape == (3, 4)


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("no_reference.py", "defines no reference"),
        ("no_get_inputs.py", "defines no get_inputs"),
        ("syntax_error.py", "syntax error at line 5"),
        ("does_not_exist.py", "does not exist"),
    ],
)
def test_bad_specs_raise_one_line(file: str, message: str) -> None:
    with pytest.raises(SpecError) as err:
        load_spec(SPECS / file)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_normalize_rejects_non_sequences_and_empty() -> None:
    with pytest.raises(SpecError):
        normalize_cases(42, "x")
    with pytest.raises(SpecError):
        normalize_cases({}, "x")


def test_unknown_op_lists_builtins() -> None:
    with pytest.raises(FileNotFoundError) as err:
        resolve_op("no_such_op")
    assert "swish" in str(err.value) and set(builtin_ops()) >= {"swish", "softmax", "conv1d"}


def test_identical_specs_hash_equal_and_differ_on_change(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text((SPECS / "kernelbench_swish.py").read_text())
    h1 = load_spec(a).source_hash
    a.write_text(a.read_text() + "\n# changed\n")
    assert load_spec(a).source_hash != h1
