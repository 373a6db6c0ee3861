"""Every bad input: one line on stderr naming the problem, exit code 2, no traceback, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

SPECS = Path(__file__).parent / "specs"


def assert_clean_failure(result, fragment: str, state: Path) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ke: error:") and fragment in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    assert not (state / "ke.duckdb").exists(), "a bad input must not create the metadata store"
    assert not (state / "artifacts").exists(), "a bad input must not write artifacts"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--op", "no_such_op", "--hw", "cpu"], "unknown op 'no_such_op'"),
        (["--op", "missing/spec.py", "--hw", "cpu"], "does not exist"),
        (["--op", str(SPECS / "no_reference.py"), "--hw", "cpu"], "defines no reference"),
        (["--op", str(SPECS / "no_get_inputs.py"), "--hw", "cpu"], "defines no get_inputs"),
        (["--op", str(SPECS / "syntax_error.py"), "--hw", "cpu"], "syntax error at line 5"),
        (["--op", "swish", "--hw", "tpu9"], "unknown hardware target 'tpu9'"),
        (["--op", "swish", "--hw", "cpu", "--strategy", "annealing"], "unknown strategy 'annealing'"),
        (["--op", "swish", "--hw", "cpu", "--budget", "0"], "--budget must be a positive integer"),
        (["--op", "swish", "--hw", "cpu", "--budget", "-3"], "--budget must be a positive integer"),
        (["--op", "swish", "--hw", "cpu", "--budget", "many"], "'many' is not a valid integer"),
        (["--op", "swish", "--hw", "h100"], "no NVIDIA H100"),
        (["--op", "conv1d", "--hw", "mi350", "--strategy", "mcts", "--budget", "30"], "no AMD Instinct MI350X"),
        (["--op", "swish", "--hw", "cpu", "--executor", "spark"], "unknown executor 'spark'"),
        (["--op", "swish", "--hw", "cpu", "--executor", "local", "--ray-address", "127.0.0.1:1"],
         "--ray-address needs --executor ray"),
        (["--op", "swish", "--hw", "cpu", "--executor", "ray", "--ray-address", "127.0.0.1:1"],
         "cannot join the Ray cluster at 127.0.0.1:1: nothing answers"),
        (["--op", "swish", "--hw", "cpu", "--concurrency", "0"], "--concurrency must be at least 1"),
        (["--op", "swish", "--hw", "cpu", "--operator", "gpt"], "unknown operator 'gpt'"),
        (["--op", "swish", "--hw", "cpu", "--model", "m"], "--model needs an LLM operator"),
        (["--op", "swish", "--hw", "cpu", "--max-cost", "0"], "--max-cost must be positive"),
        (["--op", "swish", "--hw", "cpu", "--code-root", "/no/such/dir"],
         "code root /no/such/dir (from --code-root) is not a directory"),
    ],
)
def test_search_rejects_bad_input(ke, tmp_path: Path, args: list[str], fragment: str) -> None:
    state = tmp_path / "state"
    result = ke("search", *args, "--state-dir", str(state))
    assert_clean_failure(result, fragment, state)


def test_device_target_without_device_hints_simulate(ke, tmp_path: Path) -> None:
    result = ke("search", "--op", "swish", "--hw", "h100", "--state-dir", str(tmp_path / "s"))
    assert result.returncode == 2
    assert "--simulate" in result.stderr and "ke worker" in result.stderr


def test_unwritable_state_dir(ke, tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    state = blocker / "state"
    result = ke("search", "--op", "swish", "--hw", "cpu", "--budget", "1", "--state-dir", str(state))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "is not writable" in result.stderr
    assert blocker.read_text() == "not a directory"


def test_eval_bad_inputs(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    missing = ke("eval", "--op", "swish", "--hw", "cpu", str(tmp_path / "nope.py"), "--state-dir", str(state))
    assert_clean_failure(missing, "candidate file", state)
    bad_timeout = ke("eval", "--op", "swish", "--hw", "cpu", str(SPECS / "no_reference.py"), "--timeout", "0",
                     "--state-dir", str(state))
    assert_clean_failure(bad_timeout, "--timeout must be positive", state)


def test_show_unknown_run_and_missing_state(ke, tmp_path: Path) -> None:
    result = ke("show", "deadbeef", "--state-dir", str(tmp_path / "empty"))
    assert result.returncode == 2 and "no KernelEvolve state" in result.stderr
    assert not (tmp_path / "empty").exists()


def test_unknown_option_is_one_line(ke, tmp_path: Path) -> None:
    result = ke("search", "--frobnicate", "--state-dir", str(tmp_path))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
