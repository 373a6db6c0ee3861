"""The DuckDB metadata store, on real files, with real processes for the concurrency cases."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from kernelevolve.store import schema
from kernelevolve.store.metadata import MetadataStore, StoreError
from kernelevolve.store.records import CaseRecord, RunRecord
from search.node import Node

REPO = Path(__file__).resolve().parent.parent
WRITER = REPO / "tests" / "helpers" / "store_writer_proc.py"


def make_run(run_id: str = "run-a", created_at: float = 0.0, **kw) -> RunRecord:
    return RunRecord(run_id=run_id, op="conv1d", op_path="/ops/conv1d.py", spec_hash="spec1", hw="h100",
                     strategy="greedy", operator="offline", budget=50, seed=7, created_at=created_at, **kw)


def make_node(node_id: int, parent_id: int | None = None, depth: int = 1, status: str = "ok",
              fitness: float = 1.0, run_id: str = "run-a", **kw) -> Node:
    return Node(run_id=run_id, node_id=node_id, parent_id=parent_id, depth=depth,
                candidate_hash=f"h{node_id}", status=status, fitness=fitness, **kw)


@pytest.fixture
def store(tmp_path: Path) -> MetadataStore:
    s = MetadataStore(tmp_path / "state" / "ke.duckdb")
    s.create_run(make_run())
    return s


def ids(nodes: list[Node]) -> list[int]:
    return [n.node_id for n in nodes]


def spawn_writer(db: Path, run_id: str, n: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, str(WRITER), str(db), run_id, str(n)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ---- round trips -------------------------------------------------------------------------------


def test_run_round_trip_and_update(store: MetadataStore) -> None:
    run = make_run("run-b", created_at=100.0, config={"concurrency": 4, "tags": ["x"]}, simulated=True)
    store.create_run(run)
    assert store.get_run("run-b") == RunRecord(**{**run.__dict__, "updated_at": 100.0})
    assert store.get_run("nope") is None
    fresh = store.get_run("run-a")
    assert fresh is not None and fresh.created_at > 0 and fresh.updated_at == fresh.created_at

    store.update_run("run-b", status="completed", best_node_id=3, config={"k": 1})
    updated = store.get_run("run-b")
    assert (updated.status, updated.best_node_id, updated.config) == ("completed", 3, {"k": 1})
    assert updated.updated_at > 100.0 and updated.created_at == 100.0
    with pytest.raises(ValueError, match="bogus"):
        store.update_run("run-b", bogus="x")
    with pytest.raises(LookupError):
        store.update_run("missing", status="failed")
    with pytest.raises(StoreError, match="already exists"):
        store.create_run(run)

    assert [r.run_id for r in store.list_runs()] == ["run-a", "run-b"]  # run-a is newer
    store.add_node(make_node(1))
    assert store.run_node_counts() == {"run-a": 1, "run-b": 0}


def test_node_and_case_round_trip(store: MetadataStore) -> None:
    node = make_node(1, status="ok", fitness=2.5, reason="fine", speedup_vs_eager=3.0, speedup_vs_compile=2.5,
                     path_ref="run-a/1", operator_meta={"model": "m", "params": {"BLOCK": 128}, "k": [1, 2]},
                     tokens_in=100, tokens_out=50, cost_usd=0.01, eval_seconds=1.5, created_at=123.0)
    cases = [CaseRecord("run-a", 1, "large", "ok", 1.0, 2.0, 1.5, 1e-6, ""),
             CaseRecord("run-a", 1, "small", "incorrect", None, 0.5, None, 0.3, "mismatch")]
    store.add_node(node, cases)
    assert store.get_node("run-a", 1) == node
    assert store.get_node("run-a", 2) is None
    assert store.cases("run-a", 1) == cases
    buggy = make_node(2, parent_id=1, depth=2, status="compile_error", fitness=0.0)
    store.add_node(buggy)
    assert store.nodes("run-a") == [node, store.get_node("run-a", 2)]
    assert store.get_node("run-a", 2).created_at > 0  # stamped at insert
    assert store.count_nodes("run-a") == 2 and store.next_node_id("run-a") == 3
    assert store.next_node_id("other") == 1
    with duckdb.connect(str(store.path), read_only=True) as conn:
        rows = conn.execute("SELECT node_id, is_buggy FROM nodes ORDER BY 1").fetchall()
    assert rows == [(1, False), (2, True)]
    with pytest.raises(StoreError, match="already exists"):
        store.add_node(node)
    with pytest.raises(ValueError):
        store.add_node(make_node(5, parent_id=5))


def test_resolve_run_id(store: MetadataStore) -> None:
    for run_id in ("abc123", "abc456", "abd789", "abc"):
        store.create_run(make_run(run_id))
    assert store.resolve_run_id("abc") == "abc"  # exact wins over prefix
    assert store.resolve_run_id("abc1") == "abc123"
    assert store.resolve_run_id("abd") == "abd789"
    with pytest.raises(LookupError, match="'zz'"):
        store.resolve_run_id("zz")
    with pytest.raises(LookupError) as err:
        store.resolve_run_id("ab")
    assert str(err.value) == "'ab' matches several runs: abc, abc123, abc456, abd789"
    with pytest.raises(LookupError):
        store.resolve_run_id("")


def test_evaluation_cache(store: MetadataStore) -> None:
    key = ("cand", "spec", "h100", "ev1")
    assert store.cached_evaluation(*key) is None
    store.cache_evaluation(*key, {"status": "ok", "fitness": 1.2})
    store.cache_evaluation(*key, {"status": "ok", "fitness": 1.3})  # upsert
    assert store.cached_evaluation(*key) == {"status": "ok", "fitness": 1.3}
    assert store.cached_evaluation("cand", "spec", "h100", "ev2") is None


# ---- graph queries -----------------------------------------------------------------------------

#   root ── 1 ── 3 ── 6 ── 9        depth 4
#           │    └─── 7
#           └─── 4 ── 8 ── 10       depth 4
#   root ── 2 ── 5
TREE = {1: None, 2: None, 3: 1, 4: 1, 5: 2, 6: 3, 7: 3, 8: 4, 9: 6, 10: 8}


@pytest.fixture
def tree(store: MetadataStore) -> MetadataStore:
    depth: dict[int, int] = {}
    for node_id, parent in TREE.items():
        depth[node_id] = 1 if parent is None else depth[parent] + 1
        store.add_node(make_node(node_id, parent, depth[node_id], fitness=float(node_id)))
    store.create_run(make_run("run-z"))  # same ids in another run must not leak into the walks
    store.add_node(make_node(1, run_id="run-z"))
    store.add_node(make_node(2, 1, 2, run_id="run-z"))
    return store


def test_ancestors(tree: MetadataStore) -> None:
    assert ids(tree.ancestors("run-a", 9)) == [6, 3, 1]
    assert ids(tree.ancestors("run-a", 10)) == [8, 4, 1]
    assert ids(tree.ancestors("run-a", 5)) == [2]
    assert tree.ancestors("run-a", 1) == [] and tree.ancestors("run-a", 99) == []
    assert ids(tree.ancestors("run-z", 2)) == [1]


def test_subtree(tree: MetadataStore) -> None:
    assert ids(tree.subtree("run-a", 1)) == [1, 3, 4, 6, 7, 8, 9, 10]
    assert ids(tree.subtree("run-a", 3)) == [3, 6, 7, 9]
    assert ids(tree.subtree("run-a", 2)) == [2, 5]
    assert ids(tree.subtree("run-a", 10)) == [10]
    assert tree.subtree("run-a", 99) == []
    assert tree.subtree("run-a", 6)[1] == tree.get_node("run-a", 9)


def test_children_counts(tree: MetadataStore) -> None:
    assert tree.children_counts("run-a") == {None: 2, 1: 2, 2: 1, 3: 2, 4: 1, 6: 1, 8: 1}
    assert tree.children_counts("empty") == {}


def test_best_nodes(store: MetadataStore) -> None:
    specs = [(1, "ok", 1.5), (2, "incorrect", 9.0), (3, "ok", 2.0), (4, "ok", 1.5), (5, "timeout", 0.0),
             (6, "rejected", 5.0), (7, "ok", 0.8)]
    for node_id, status, fitness in specs:
        store.add_node(make_node(node_id, status=status, fitness=fitness))
    assert ids(store.best_nodes("run-a")) == [3]
    assert ids(store.best_nodes("run-a", k=3)) == [3, 1, 4]  # tie on 1.5: lower id first
    assert ids(store.best_nodes("run-a", k=10)) == [3, 1, 4, 7]
    assert store.best_nodes("other", k=2) == []


# ---- atomicity and batches ---------------------------------------------------------------------


def test_add_node_is_atomic(store: MetadataStore) -> None:
    dup = [CaseRecord("run-a", 1, "c", "ok"), CaseRecord("run-a", 1, "c", "ok")]
    with pytest.raises(StoreError, match="duplicate case"):
        store.add_node(make_node(1), dup)
    assert store.get_node("run-a", 1) is None and store.cases("run-a", 1) == []
    assert store.count_nodes("run-a") == 0
    with pytest.raises(ValueError):
        store.add_node(make_node(1), [CaseRecord("run-a", 2, "c", "ok")])
    store.add_node(make_node(1), dup[:1])  # the store is still usable
    assert len(store.cases("run-a", 1)) == 1


def test_batch_bulk_insert(store: MetadataStore) -> None:
    n = 10_000
    with store.batch() as s:
        for i in range(1, n + 1):
            s.add_node(make_node(i, parent_id=None if i == 1 else i // 2, depth=i.bit_length(),
                                 status="ok" if i % 3 else "crash", fitness=i % 97 / 10.0,
                                 operator_meta={"i": i}),
                       [CaseRecord("run-a", i, "c0", "ok", latency_ms=float(i))])
        assert s.count_nodes("run-a") == n  # reads inside the batch see the buffered rows
    assert store.count_nodes("run-a") == n
    assert store.get_node("run-a", 4321).operator_meta == {"i": 4321}
    assert store.cases("run-a", n)[0].latency_ms == float(n)
    assert ids(store.ancestors("run-a", 1000)) == [500, 250, 125, 62, 31, 15, 7, 3, 1]
    assert store.best_nodes("run-a")[0].fitness == 9.6


def test_batch_rolls_back_on_error(store: MetadataStore) -> None:
    with pytest.raises(RuntimeError), store.batch():
        store.add_node(make_node(1))
        store.update_run("run-a", status="failed")
        raise RuntimeError("boom")
    assert store.count_nodes("run-a") == 0 and store.get_run("run-a").status == "running"
    with pytest.raises(StoreError, match="duplicate"), store.batch():
        store.add_node(make_node(1))
        store.add_node(make_node(1))
    assert store.count_nodes("run-a") == 0


def test_threads_share_a_store(store: MetadataStore) -> None:
    errors: list[BaseException] = []

    def work(first: int) -> None:
        try:
            for i in range(first, first + 10):
                store.add_node(make_node(i))
                store.nodes("run-a")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(1 + 10 * t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and store.count_nodes("run-a") == 40


# ---- schema ------------------------------------------------------------------------------------


def test_schema_version_recorded_and_reopen_keeps_data(store: MetadataStore) -> None:
    assert store.schema_version() == schema.SCHEMA_VERSION
    store.add_node(make_node(1))
    again = MetadataStore(store.path)
    assert again.get_node("run-a", 1) == store.get_node("run-a", 1)
    with duckdb.connect(str(store.path)) as conn:
        assert conn.execute("SELECT * FROM schema_meta").fetchall() == [(schema.SCHEMA_VERSION,)]
        conn.begin()
        assert schema.migrate(conn) == schema.SCHEMA_VERSION  # nothing left to apply
        conn.commit()
        for table, columns in (("nodes", schema.NODE_COLUMNS), ("evaluations", schema.CASE_COLUMNS)):
            described = [(r[0], r[1]) for r in conn.execute(f"DESCRIBE {table}").fetchall()]
            assert described == columns
        assert [r[0] for r in conn.execute("DESCRIBE runs").fetchall()] == schema.RUN_COLUMNS


def test_appended_migration_applies_once(store: MetadataStore) -> None:
    future = [*schema.MIGRATIONS, ["ALTER TABLE runs ADD COLUMN IF NOT EXISTS note VARCHAR"]]
    with duckdb.connect(str(store.path)) as conn:
        conn.begin()
        assert schema.migrate(conn, future) == schema.SCHEMA_VERSION
        conn.commit()
        assert schema.read_version(conn) == schema.SCHEMA_VERSION + 1
        assert schema.migrate(conn, future) == schema.SCHEMA_VERSION + 1
        assert conn.execute("SELECT run_id, note FROM runs").fetchall() == [("run-a", None)]


def test_newer_schema_is_refused(store: MetadataStore) -> None:
    with duckdb.connect(str(store.path)) as conn:
        conn.execute("UPDATE schema_meta SET version = ?", [schema.SCHEMA_VERSION + 1])
    with pytest.raises(StoreError) as err:
        MetadataStore(store.path)
    message = str(err.value)
    assert "\n" not in message and f"v{schema.SCHEMA_VERSION + 1}, newer than this KernelEvolve" in message


def test_foreign_duckdb_file_gets_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "other.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE mine AS SELECT 42 AS x")
    store = MetadataStore(path)
    assert store.schema_version() == schema.SCHEMA_VERSION and store.list_runs() == []


@pytest.mark.parametrize("kind", ["parent_is_file", "not_duckdb", "empty_file", "directory"])
def test_bad_paths_raise_one_line_store_errors(tmp_path: Path, kind: str) -> None:
    (tmp_path / "f").write_text("just a file")
    (tmp_path / "junk.duckdb").write_text("this is not a database\n" * 200)
    (tmp_path / "empty.duckdb").touch()
    (tmp_path / "adir").mkdir()
    path = {"parent_is_file": tmp_path / "f" / "ke.duckdb", "not_duckdb": tmp_path / "junk.duckdb",
            "empty_file": tmp_path / "empty.duckdb", "directory": tmp_path / "adir"}[kind]
    with pytest.raises(StoreError) as err:
        MetadataStore(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    if kind in ("not_duckdb", "empty_file"):
        assert "not a DuckDB database" in str(err.value)


# ---- real processes ----------------------------------------------------------------------------


HOLDERS = {
    # a program outside the store's protocol (say the duckdb CLI) holding DuckDB's own lock
    "duckdb": "import duckdb\nc = duckdb.connect(DB)",
    # another KernelEvolve process inside the store (it holds the lock file exclusively)
    "lockfile": "import fcntl, os\nfd = os.open(DB + '.lock', os.O_RDWR)\nfcntl.flock(fd, fcntl.LOCK_EX)",
}


@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_lock_held_too_long_raises(tmp_path: Path, holder: str) -> None:
    db = tmp_path / "ke.duckdb"
    MetadataStore(db)
    script = f"DB = {str(db)!r}\n{HOLDERS[holder]}\nimport time\nprint('held', flush=True)\ntime.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(StoreError) as err:
            MetadataStore(db, lock_timeout_s=0.5).list_runs()
        assert 0.5 <= time.monotonic() - started < 5
        assert str(err.value) == f"metadata store {db} is locked by another process for more than 0.5s"
    finally:
        proc.kill()
        proc.wait()
    assert MetadataStore(db).list_runs() == []  # usable again once the holder is gone


def test_reader_works_while_a_process_writes(tmp_path: Path) -> None:
    db = tmp_path / "ke.duckdb"
    store = MetadataStore(db)
    writer = spawn_writer(db, "w1", 200)
    counts: list[int] = []
    try:
        while writer.poll() is None:
            nodes = store.nodes("w1")
            assert ids(nodes) == list(range(1, len(nodes) + 1))  # whole nodes, in order
            assert len(store.list_runs()) <= 1
            best = store.best_nodes("w1", k=3)
            assert all(not n.is_buggy for n in best)
            counts.append(len(nodes))
    finally:
        out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    assert out.strip() == "done w1 200"
    assert counts == sorted(counts), "node counts went backwards"
    # Without the waiter hand-off a busy writer starves the reader (~5 distinct counts seen, vs ~75).
    assert len(set(counts)) >= 10, f"reader rarely got in while the writer ran: {sorted(set(counts))}"
    assert store.count_nodes("w1") == 200
    assert all(len(store.cases("w1", i)) == 2 for i in (1, 100, 200))


def test_two_writer_processes_both_complete(tmp_path: Path) -> None:
    db = tmp_path / "ke.duckdb"
    writers = [spawn_writer(db, run_id, 150) for run_id in ("wa", "wb")]  # both create the schema
    results = [w.communicate(timeout=120) for w in writers]
    for writer, (_, err) in zip(writers, results, strict=True):
        assert writer.returncode == 0, err
    store = MetadataStore(db)
    assert store.run_node_counts() == {"wa": 150, "wb": 150}
    assert store.schema_version() == schema.SCHEMA_VERSION
    with duckdb.connect(str(db), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM schema_meta").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM evaluations").fetchone()[0] == 600


def test_many_runs_get_one_status_in_one_session(store: MetadataStore) -> None:
    """An interrupted sweep marks all its unfinished runs at once; the others keep theirs."""
    for name in ("s-1", "s-2", "s-3"):
        store.create_run(make_run(name))
    store.set_status(["s-1", "s-3"], "interrupted")
    store.set_status([], "interrupted")
    assert [store.get_run(n).status for n in ("s-1", "s-2", "s-3")] == ["interrupted", "running", "interrupted"]
