"""Fault injection on the local store (issue #30, points 12 and 14-18): a damaged DuckDB file, a full disk,
a lost node folder, read-only state, two processes on one run, file modes and a torn log line. Real parts
throughout: DuckDB files, the `ke` command in its own process, real folders; the full disk is injected
where artifact bytes meet the disk (no tmpfs can be mounted here)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import stat
from pathlib import Path

import pytest
from conftest import run_ke
from helpers.store_fault_helpers import FULL_DISK_AFTER, make_read_only, make_writable, read_only_prefix, run_ke_with

from kernelevolve.store.metadata import MetadataStore


def _one_error_line(result, fragment: str) -> str:
    lines = [ln for ln in result.stderr.strip().splitlines() if not ln.startswith("[")]  # [progress] lines
    assert len(lines) == 1 and lines[0].startswith("ke: error:"), result.stderr
    assert fragment in lines[0], lines[0]
    assert "internal error" not in lines[0] and "Traceback" not in result.stderr + result.stdout
    return lines[0]


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One finished 3-node swish search, copied by each test that changes it."""
    state = tmp_path_factory.mktemp("searched") / "state"
    result = run_ke("search", "--op", "swish", "--hw", "cpu", "--budget", "3", "--state-dir", str(state), "--json")
    assert result.returncode == 0, result.stderr
    return state, result.json()["run_id"]


@pytest.fixture
def state(searched: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    copy = tmp_path / "state"
    shutil.copytree(searched[0], copy)
    return copy, searched[1]


def _status(state: Path, run_id: str) -> str:
    return MetadataStore(state / "ke.duckdb").get_run(run_id).status


# --- 12: store, disk and database failures are not internal errors ----------------------------------------

def test_a_truncated_database_is_named_damaged(state: tuple[Path, str]) -> None:
    root, _ = state
    db = root / "ke.duckdb"
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 3)
    line = _one_error_line(run_ke("runs", "--state-dir", str(root)), "damaged")
    assert str(db) in line


def test_a_full_disk_fails_the_run_with_one_line_and_leaves_it_resumable(tmp_path: Path) -> None:
    root = tmp_path / "state"
    result = run_ke_with(FULL_DISK_AFTER, "search", "--op", "swish", "--hw", "cpu", "--budget", "3",
                         "--state-dir", str(root), extra_env={"KE_TEST_WRITES_OK": "6"})
    assert result.returncode == 1, result.stderr
    line = _one_error_line(result, "No space left on device")
    assert "cannot write artifact runs/" in line and str(root / "artifacts") in line
    runs = run_ke("runs", "--state-dir", str(root), "--json").json()["runs"]
    assert [r["status"] for r in runs] == ["failed"]
    resumed = run_ke("search", "--resume", runs[0]["run_id"], "--state-dir", str(root), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.json()["status"] == "completed" and resumed.json()["nodes"] == 3


def test_database_and_disk_errors_outside_the_store_get_their_own_line() -> None:
    import duckdb

    from kernelevolve.errors import disk_failure

    full = disk_failure(OSError(28, "No space left on device", "/x/ke.duckdb.wal"))
    assert full is not None and "disk is full" in full and "/x/ke.duckdb.wal" in full
    dup = disk_failure(duckdb.ConstraintException('Duplicate key "run_id: r, node_id: 4"'))
    assert dup is not None and dup.startswith("run database failure") and "Duplicate key" in dup
    assert disk_failure(KeyError("bug")) is None and disk_failure(OSError(2, "No such file")) is None


# --- 14: a lost node folder ----------------------------------------------------------------------------------

def test_a_lost_node_folder_is_reported_and_recovered(state: tuple[Path, str], tmp_path: Path) -> None:
    root, run_id = state
    shutil.rmtree(root / "artifacts" / "runs" / run_id / "nodes" / "000001")  # node 1 is the best
    shown = run_ke("show", run_id, "--state-dir", str(root))
    assert shown.returncode == 0, shown.stderr
    assert "missing artifacts" in shown.stdout and "node 1: evaluation.json, operator.json" in shown.stdout
    out = tmp_path / "best.py"
    best = run_ke("best", run_id, "--out", str(out), "--state-dir", str(root))
    assert best.returncode == 0, best.stderr
    assert out.is_file() and "evaluation.json is missing" in best.stderr and "rebuilt" in best.stderr
    meta = MetadataStore(root / "ke.duckdb")  # two more nodes, children of node 1 (greedy) whose evaluation is lost
    meta.update_run(run_id, status="interrupted", budget=5, config={**meta.get_run(run_id).config, "budget": 5})
    resumed = run_ke("search", "--resume", run_id, "--state-dir", str(root), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.json()["status"] == "completed" and resumed.json()["nodes"] == 5
    assert "evaluation is rebuilt from the run database" in resumed.stderr


# --- 15: read-only state ---------------------------------------------------------------------------------

def test_read_commands_work_on_read_only_state(state: tuple[Path, str], tmp_path: Path) -> None:
    prefix = read_only_prefix()
    if prefix is None:
        pytest.skip("running as root without setpriv: a mode-555 folder is not read-only here")
    root, run_id = state
    make_read_only(root)
    try:
        for args in (["runs"], ["show", run_id], ["best", run_id, "--out", str(tmp_path / "b.py")]):
            result = run_ke_with("", *args, "--state-dir", str(root), prefix=prefix)
            assert result.returncode == 0, (args, result.stderr)
            assert "Traceback" not in result.stdout + result.stderr
        refused = run_ke_with("", "search", "--op", "swish", "--hw", "cpu", "--budget", "1", "--state-dir",
                              str(root), prefix=prefix)
        assert refused.returncode == 2 and "not writable" in refused.stderr, refused.stderr
        resumed = run_ke_with("", "search", "--resume", run_id, "--state-dir", str(root), prefix=prefix)
        assert resumed.returncode == 2, resumed.stderr
        _one_error_line(resumed, "not writable")
    finally:
        make_writable(root)


# --- 16: one process per run ------------------------------------------------------------------------------

def _hold(root: str, run_id: str, ready) -> None:
    from kernelevolve.store.run_lock import hold_run

    hold_run(Path(root), run_id)
    ready.set()
    signal.pause()


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*") if p.is_file() and "logs" not in p.parts and "locks" not in p.parts
            and p.name != "ke.duckdb.lock"}


def test_a_held_run_is_refused_before_anything_is_written_and_freed_when_its_holder_dies(
        state: tuple[Path, str]) -> None:
    root, run_id = state
    MetadataStore(root / "ke.duckdb").update_run(run_id, status="interrupted", budget=4)
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold, args=(str(root), run_id, ready))
    holder.start()
    try:
        assert ready.wait(60)
        before = _tree(root)
        second = run_ke("search", "--resume", run_id, "--state-dir", str(root))
        assert second.returncode == 2, second.stderr
        _one_error_line(second, f"run {run_id} is being driven by another process (pid {holder.pid})")
        assert _tree(root) == before
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.join()
    from kernelevolve.store.run_lock import hold_run, release_run

    hold_run(root, run_id)  # the dead holder's claim died with it
    release_run(run_id)


# --- 17: file modes --------------------------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_artifacts_follow_the_umask(tmp_path: Path, umask: int) -> None:
    from kernelevolve.store.objects import ObjectStore

    old = os.umask(umask)
    try:
        store = ObjectStore(str(tmp_path / "artifacts"))
        store.put_json("runs/r/nodes/000001/evaluation.json", {"ok": True})
        ref = store.put_kernel("print(1)\n")
    finally:
        os.umask(old)
    for path in (tmp_path / "artifacts" / "runs/r/nodes/000001/evaluation.json", tmp_path / "artifacts" / ref):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, oct(path.stat().st_mode)


# --- 18: the log never keeps a torn line ----------------------------------------------------------------

def test_a_full_disk_drops_a_log_line_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import structlog

    from kernelevolve import logging_setup

    log_path = tmp_path / "logs" / "ke.jsonl"
    logging_setup.configure_logging(log_path)
    log = structlog.get_logger("test")
    log.info("before", n=1)
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:  # the disk fills up part-way through the line
        if len(data) > 8:
            return real_write(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(logging_setup.os, "write", half_then_full)
    try:
        log.info("during", payload="x" * 200)
    finally:
        monkeypatch.setattr(logging_setup.os, "write", real_write)
    log.info("after", n=2)
    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    lines = log_path.read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["before", "after"]
