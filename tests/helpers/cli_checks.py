"""What every refused command must look like: one ``ke: error:`` line, exit 2, and nothing written."""

from __future__ import annotations

from pathlib import Path


def assert_clean_failure(result, fragment: str, state: Path) -> None:
    """``result`` (a finished ``ke``) was refused with ``fragment`` in its one line, and wrote no store."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ke: error:") and fragment in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    assert not (state / "ke.duckdb").exists(), "a bad input must not create the metadata store"
    assert not (state / "artifacts").exists(), "a bad input must not write artifacts"
