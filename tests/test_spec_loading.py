"""Spec loading: our format and KernelBench's, and every malformed spec fails with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evaluators.spec import SpecError, load_spec, normalize_cases
from kernelevolve.builtin_specs import builtin_ops, resolve_op

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


MEAN_SPEC = '''import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs(device="cpu"):
    return {"big": (torch.randn(20000, device=device),)}


TOLERANCES = {torch.float32: (0.1, 0.0)}
MEAN_ABS_ERR = {torch.float32: 0.01}
'''


def test_mean_abs_err_catches_a_bias_each_element_hides(tmp_path: Path) -> None:
    """A loose elementwise tolerance (rounding flips) plus a mean bound: a small bias on every element passes
    the first and fails the second; rare large-ish flips pass both."""
    from evaluators.correctness import compare

    path = tmp_path / "mean_spec.py"
    path.write_text(MEAN_SPEC)
    spec = load_spec(path)
    assert spec.mean_abs_err == {torch.float32: 0.01}
    expected = torch.randn(20000)
    ok, _, why = compare([expected + 0.05], [expected], spec)
    assert not ok and "mean abs error 0.05 exceeds the spec's MEAN_ABS_ERR 0.01" in why
    flips = expected.clone()
    flips[::100] += 0.09  # 1% of elements off by 0.09: mean 9e-4
    ok, err, why = compare([flips], [expected], spec)
    assert ok and abs(err - 0.09) < 1e-6, why
    ok, _, why = compare([expected + 0.11], [expected], spec)
    assert not ok and "max abs error" in why  # the elementwise bound still applies first


def test_a_malformed_mean_abs_err_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad_mean.py"
    path.write_text(MEAN_SPEC.replace("0.01}", "-1}"))
    with pytest.raises(SpecError, match="MEAN_ABS_ERR must be a dict dtype -> positive bound"):
        load_spec(path)


def test_device_lock_serialises_timing_across_processes(tmp_path: Path) -> None:
    """Two evaluation processes on one GPU never time at once: their locked intervals do not overlap."""
    import os
    import subprocess
    import sys

    script = (
        "import time, sys\n"
        "from evaluators.device_lock import exclusive_device\n"
        "with exclusive_device(0) as waited:\n"
        "    start = time.time(); time.sleep(0.6); end = time.time()\n"
        "print(start, end, waited)\n"
    )
    env = {**os.environ, "KE_DEVICE_LOCK_DIR": str(tmp_path), "PYTHONPATH": str(Path(__file__).parents[1])}
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(3)]
    spans = sorted(tuple(map(float, p.communicate(timeout=60)[0].split())) for p in procs)
    for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
        assert start >= end - 1e-3, spans
    assert max(w for _, _, w in spans) >= 0.5, "someone must have waited for the lock"

    def path_seen_with(visible: str | None, index: int) -> str:
        child = {k: v for k, v in env.items() if k != "CUDA_VISIBLE_DEVICES"}
        child |= {"CUDA_VISIBLE_DEVICES": visible} if visible is not None else {}
        return subprocess.run([sys.executable, "-c", f"from evaluators.device_lock import lock_path;"
                               f"print(lock_path({index}))"], capture_output=True, text=True, env=child,
                              check=True).stdout.strip()

    # the same physical GPU locks one file however the process numbers it, and other GPUs lock others
    assert path_seen_with("1", 0) == path_seen_with(None, 1) == path_seen_with("3,1", 1)
    assert path_seen_with("1", 0).endswith("ke-timing-gpu-1.lock")
    assert path_seen_with("3,1", 0) != path_seen_with("3,1", 1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (bytes(range(128, 256)) * 2, "is not UTF-8 Python source (byte 0x80 at offset 0"),
        (b"", "is empty"),
        (b"  \n\t\n", "is empty"),
        (b"x = 1\n\0\0\0", "NUL byte at offset 6"),
    ],
)
def test_spec_that_is_not_python_text_raises_one_line(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "blob.py"
    path.write_bytes(data)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert str(err.value).startswith("spec blob.py ") and message in str(err.value)
    assert "\n" not in str(err.value)
