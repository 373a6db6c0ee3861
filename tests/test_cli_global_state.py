"""``--state-dir`` and ``--store-url`` before the command (``ke --state-dir X best ...``) as well as after it,
with the same env-var fallback; given in both places with different values, refused in one line (issue 30,
point 10). Each case is one real ``ke`` process on an empty store: no search runs."""

from __future__ import annotations

from pathlib import Path

from kernelevolve.store.metadata import MetadataStore


def _store(path: Path) -> Path:
    MetadataStore(path / "ke.duckdb")
    return path


def test_state_dir_before_the_command_is_used(ke, tmp_path: Path) -> None:
    state = _store(tmp_path / "state")
    listed = ke("--state-dir", str(state), "runs", "--json", env={"KE_STATE_DIR": str(tmp_path / "nowhere")})
    assert listed.returncode == 0, listed.stderr
    assert listed.json() == {"runs": []}
    best = ke("--state-dir", str(state), "--store-url", str(state / "artifacts"), "best", "abc",
              "--out", str(tmp_path / "k.py"))
    assert best.returncode == 2 and best.stderr.strip() == "ke: error: no run matches 'abc'"


def test_the_env_var_still_fills_in_and_after_the_command_still_works(ke, tmp_path: Path) -> None:
    state = _store(tmp_path / "state")
    assert ke("runs", "--json", env={"KE_STATE_DIR": str(state)}).returncode == 0
    assert ke("runs", "--json", "--state-dir", str(state)).returncode == 0
    same = ke("--state-dir", str(state), "runs", "--json", "--state-dir", str(state / "." / ""))
    assert same.returncode == 0, same.stderr  # the same folder, spelled twice, is not a conflict


def test_different_values_before_and_after_are_refused_in_one_line(ke, tmp_path: Path) -> None:
    state = _store(tmp_path / "state")
    for flag, before, after, rest in (("--state-dir", state, tmp_path / "other", ()),
                                      ("--store-url", state / "artifacts", tmp_path / "elsewhere",
                                       ("--state-dir", str(state)))):
        result = ke(flag, str(before), "runs", flag, str(after), *rest)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and f"{flag} given twice with different values" in result.stderr
