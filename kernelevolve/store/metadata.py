"""The DuckDB metadata store: runs, search-graph nodes, per-case evaluations, evaluation cache.

Concurrency model. A process that has a DuckDB file open for writing holds an exclusive lock on
it that keeps every other process out, readers included. Yet ``ke show`` must work while a search
writes, and two searches may share one store. So the store never keeps the file open between
calls: each public method attaches it (read-only for pure reads), runs in one transaction and
detaches. Contended access is retried with capped exponential backoff and jitter until
``lock_timeout_s``, then fails with a one-line StoreError.

Why a lock file next to the database (``<db>.lock``, flock: shared to read, exclusive to write)
and not DuckDB's own lock alone: DuckDB reads the file header *before* it takes its lock, so a
process that gets the lock just after another one's checkpoint can work from a stale header.
Two processes writing back to back then lose commits or fail with "Could not read enough bytes"
(seen here about once in ten runs of 2 x 150 writes under CPU load). Taking our lock first closes
that window; DuckDB's lock still guards against programs outside this protocol.

Cost. Creating a DuckDB instance takes ~17 ms even in memory, so each process keeps one
in-memory "host" connection per store file and ``ATTACH``/``DETACH``es the file on it (~2 ms to
read, ~6 ms to write and checkpoint). Threads of one process are serialised per file by an
in-process lock: the host connection is not shareable.

Fairness. Polling alone lets a process that writes back to back keep the lock almost all the
time. A process that had to wait therefore sets the lock file's mtime to now; one about to lock
that sees a fresh mtime holds off (bounded) until the waiter got in and set it back to 0.

``batch()`` keeps the file attached and one transaction open for many writes (bulk inserts);
nodes added inside it are buffered and written column-wise, ~50x faster than row by row.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import duckdb

from kernelevolve.store import schema
from kernelevolve.store.records import CaseRecord, RunRecord
from search.node import Node

_CATALOG = "ke"  # the name the store file is attached under
_LOCK_CONFLICT = ("Could not set lock", "Conflicting lock")
_BACKOFF_START_S, _BACKOFF_GROWTH, _BACKOFF_CAP_S = 0.002, 1.5, 0.2  # ~0.6 s to reach the cap
_WAITER_FRESH_S = 0.4  # > the longest sleep of a waiter (cap x 1.5 jitter): fresher = still waiting
_MAX_YIELD_S = 0.5  # the longest an attaching process defers to a waiter
_FLUSH_ROWS = 5000
_NODE_NAMES = [name for name, _ in schema.NODE_COLUMNS]
_CASE_NAMES = [name for name, _ in schema.CASE_COLUMNS]
_NODE_SELECT = ", ".join(f"n.{name}" for name in _NODE_NAMES)
_RUN_SELECT = ", ".join(schema.RUN_COLUMNS)
_UPDATABLE_RUN_FIELDS = {f.name for f in fields(RunRecord)} - {"run_id", "created_at", "updated_at"}


class StoreError(Exception):
    """A metadata-store failure, with a one-line message fit for the command line."""


@dataclass
class _Batch:
    owner: int  # thread id
    node_rows: list[tuple] = field(default_factory=list)
    case_rows: list[tuple] = field(default_factory=list)


@dataclass
class _FileState:
    """Per-file, per-process state shared by every MetadataStore on that file."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    host: duckdb.DuckDBPyConnection | None = None  # in-memory; the file is attached only per call
    lock_fd: int | None = None  # the open ``<db>.lock``; None where it cannot be opened
    pid: int = 0  # the process that opened ``host`` and ``lock_fd``: a forked child needs its own
    batch: _Batch | None = None


_FILES: dict[str, _FileState] = {}
_FILES_LOCK = threading.Lock()


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


class MetadataStore:
    """Runs, nodes, cases and the evaluation cache in one DuckDB file; see the module docstring."""

    def __init__(self, path: Path | str, lock_timeout_s: float = 60.0) -> None:
        self.path = Path(path).expanduser()
        self.lock_timeout_s = lock_timeout_s
        self._real = Path(os.path.realpath(self.path))  # what is attached: immune to later chdir
        self._lockfile = self._real.with_name(self._real.name + ".lock")
        with _FILES_LOCK:
            self._file = _FILES.setdefault(str(self._real), _FileState())
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create the directory of metadata store {self.path}: "
                             f"{e.strerror or _first_line(e)}") from e
        if self.path.is_dir():
            raise StoreError(f"metadata store {self.path} is a directory, not a DuckDB file")
        self._ensure_schema()

    def __repr__(self) -> str:
        return f"MetadataStore({str(self.path)!r})"

    # ---- connections -------------------------------------------------------------------------

    def _ensure_schema(self) -> None:
        # The common case (an up-to-date store) needs only a shared, read-only look.
        if self.path.exists() and self.schema_version() == schema.SCHEMA_VERSION:
            return
        try:
            with self._session(write=True) as conn:
                schema.migrate(conn)
        except schema.SchemaTooNewError as e:
            raise StoreError(f"metadata store {self.path} has schema v{e.found}, newer than this "
                             f"KernelEvolve (v{e.supported}); upgrade KernelEvolve") from e

    def _locked(self) -> StoreError:
        return StoreError(f"metadata store {self.path} is locked by another process for more than "
                          f"{self.lock_timeout_s:g}s")

    def _yield_to_waiters(self) -> None:
        deadline = time.monotonic() + _MAX_YIELD_S
        while time.monotonic() < deadline:
            try:
                if time.time() - os.stat(self._lockfile).st_mtime > _WAITER_FRESH_S:
                    return
            except OSError:
                return
            time.sleep(0.002)

    def _process_state(self) -> _FileState:
        state = self._file
        if state.pid != os.getpid():  # first use in this process, or a forked child
            state.host, state.lock_fd, state.pid = None, self._open_lockfile(), os.getpid()
        if state.host is None:
            state.host = duckdb.connect(":memory:")
        return state

    def _open_lockfile(self) -> int | None:
        try:
            fd = os.open(self._lockfile, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            os.utime(self._lockfile, (0, 0))  # a fresh mtime means "someone is waiting"
            return fd
        except FileExistsError:
            pass
        except OSError:
            return None
        for flags in (os.O_RDWR, os.O_RDONLY):  # read-only: a directory nobody writes through us
            with suppress(OSError):
                return os.open(self._lockfile, flags)
        return None

    def _attach(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Take the lock file, then attach the database to this process's host connection."""
        state = self._process_state()
        quoted = "'" + str(self._real).replace("'", "''") + "'"
        attach = f"ATTACH {quoted} AS {_CATALOG}" + (" (READ_ONLY)" if read_only else "")
        mode = (fcntl.LOCK_SH if read_only else fcntl.LOCK_EX) | fcntl.LOCK_NB
        self._yield_to_waiters()
        deadline = time.monotonic() + self.lock_timeout_s
        delay, waited, locked = _BACKOFF_START_S, False, state.lock_fd is None
        try:
            while True:
                try:
                    if not locked:
                        fcntl.flock(state.lock_fd, mode)
                        locked = True
                    state.host.execute(attach)
                    break
                except BlockingIOError:
                    pass  # another KernelEvolve process is in the store
                except duckdb.IOException as e:
                    message = str(e)
                    if "not a valid DuckDB database" in message:
                        raise StoreError(f"metadata store {self.path} is not a DuckDB database") from e
                    if not any(marker in message for marker in _LOCK_CONFLICT):
                        raise StoreError(f"metadata store {self.path}: {_first_line(e)}") from e
                    # else a program outside this protocol (duckdb CLI, say) holds DuckDB's lock
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._locked()
                waited = True
                with suppress(OSError):
                    os.utime(self._lockfile)  # "someone is waiting"
                time.sleep(min(remaining, delay * random.uniform(0.5, 1.5)))
                delay = min(delay * _BACKOFF_GROWTH, _BACKOFF_CAP_S)
            state.host.execute(f"USE {_CATALOG}")
        except BaseException:
            if state.host is not None and locked:
                self._detach()
            raise
        finally:
            if waited:
                with suppress(OSError):
                    os.utime(self._lockfile, (0, 0))  # got in (or gave up): stop holding others off
        return state.host

    def _detach(self) -> None:
        """Roll back anything still open, release the database and then the lock file."""
        state = self._file
        try:
            with suppress(duckdb.Error):
                state.host.rollback()
            try:
                state.host.execute("USE memory")
                if _CATALOG in {row[0] for row in state.host.execute("SHOW DATABASES").fetchall()}:
                    state.host.execute(f"DETACH {_CATALOG}")
            except duckdb.Error:
                # A host that cannot detach may still hold the file: drop it whole.
                with suppress(duckdb.Error):
                    state.host.close()
                state.host = None
        finally:
            if state.lock_fd is not None:
                fcntl.flock(state.lock_fd, fcntl.LOCK_UN)

    def _own_batch(self) -> _Batch | None:
        batch = self._file.batch
        return batch if batch is not None and batch.owner == threading.get_ident() else None

    @contextmanager
    def _session(self, write: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for one call: the open batch's (after flushing it) or a fresh attachment."""
        batch = self._own_batch()
        if batch is not None:
            self._flush(batch)
            yield self._file.host
            return
        if not self._file.lock.acquire(timeout=self.lock_timeout_s):
            raise self._locked()
        try:
            conn = self._attach(read_only=not write)
            try:
                if write:
                    conn.begin()
                yield conn
                if write:
                    conn.commit()
            except duckdb.Error as e:
                raise StoreError(f"metadata store {self.path}: {_first_line(e)}") from e
            finally:
                self._detach()
        finally:
            self._file.lock.release()

    @contextmanager
    def batch(self) -> Iterator[MetadataStore]:
        """Keep the file attached and one transaction open for many writes, committed at exit.

        Any error inside rolls the whole batch back (DuckDB has no savepoints), and a duplicate
        node added inside surfaces when the buffer is flushed: at exit or before the next read.
        Other processes are kept out for the duration, so keep batches short. Nested batches join.
        """
        if self._own_batch() is not None:
            yield self
            return
        if not self._file.lock.acquire(timeout=self.lock_timeout_s):
            raise self._locked()
        try:
            conn = self._attach(read_only=False)
            batch = self._file.batch = _Batch(threading.get_ident())
            try:
                conn.begin()
                yield self
                self._flush(batch)
                conn.commit()
            except duckdb.Error as e:
                raise StoreError(f"metadata store {self.path}: batch failed: {_first_line(e)}") from e
            finally:
                self._file.batch = None
                self._detach()
        finally:
            self._file.lock.release()

    # ---- rows --------------------------------------------------------------------------------

    @staticmethod
    def _insert_rows(conn: duckdb.DuckDBPyConnection, table: str, columns: list[tuple[str, str]],
                     rows: list[tuple]) -> None:
        """Insert rows in one statement: VALUES for a few, else one typed list bound per column."""
        if len(rows) <= 16:
            one = "(" + ", ".join("?" * len(columns)) + ")"
            if rows:
                conn.execute(f"INSERT INTO {table} VALUES " + ", ".join([one] * len(rows)),
                             [value for row in rows for value in row])
            return
        unnests = ", ".join(f"unnest(?::{sql_type}[])" for _, sql_type in columns)
        conn.execute(f"INSERT INTO {table} SELECT * FROM (SELECT {unnests})",
                     [list(column) for column in zip(*rows, strict=True)])

    def _flush(self, batch: _Batch) -> None:
        nodes, cases = batch.node_rows, batch.case_rows
        batch.node_rows, batch.case_rows = [], []
        try:
            self._insert_rows(self._file.host, "nodes", schema.NODE_COLUMNS, nodes)
            self._insert_rows(self._file.host, "evaluations", schema.CASE_COLUMNS, cases)
        except duckdb.ConstraintException as e:
            raise StoreError(f"metadata store {self.path}: duplicate node or case in batch: "
                             f"{_first_line(e)}") from e

    @staticmethod
    def _node_row(node: Node) -> tuple:
        values = asdict(node)
        values["is_buggy"] = node.is_buggy
        values["operator_meta"] = json.dumps(node.operator_meta, sort_keys=True)
        values["created_at"] = node.created_at or time.time()
        return tuple(values[name] for name in _NODE_NAMES)

    @staticmethod
    def _node(row: tuple) -> Node:
        values = dict(zip(_NODE_NAMES, row, strict=True))
        del values["is_buggy"]  # derived from status by Node itself
        values["operator_meta"] = json.loads(values["operator_meta"])
        return Node(**values)

    @staticmethod
    def _run(row: tuple) -> RunRecord:
        values = dict(zip(schema.RUN_COLUMNS, row, strict=True))
        values["config"] = json.loads(values["config"])
        return RunRecord(**values)

    def _select_nodes(self, sql: str, params: list[Any] | dict[str, Any]) -> list[Node]:
        with self._session(write=False) as conn:
            return [self._node(row) for row in conn.execute(sql, params).fetchall()]

    # ---- schema and runs ---------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._session(write=False) as conn:
            return schema.read_version(conn)

    def create_run(self, run: RunRecord) -> None:
        now = time.time()
        values = asdict(run)
        values["config"] = json.dumps(run.config, sort_keys=True)
        values["created_at"] = run.created_at or now
        values["updated_at"] = run.updated_at or values["created_at"]
        placeholders = ", ".join("?" * len(schema.RUN_COLUMNS))
        with self._session(write=True) as conn:
            try:
                conn.execute(f"INSERT INTO runs ({_RUN_SELECT}) VALUES ({placeholders})",
                             [values[name] for name in schema.RUN_COLUMNS])
            except duckdb.ConstraintException as e:
                raise StoreError(f"run {run.run_id} already exists in {self.path}") from e

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._session(write=False) as conn:
            row = conn.execute(f"SELECT {_RUN_SELECT} FROM runs WHERE run_id = ?", [run_id]).fetchone()
        return self._run(row) if row else None

    def resolve_run_id(self, prefix: str) -> str:
        """The run id equal to ``prefix``, else the only one starting with it (git-style)."""
        with self._session(write=False) as conn:
            ids = [r[0] for r in conn.execute(
                "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id", [prefix]).fetchall()]
        if prefix in ids:
            return prefix
        if not prefix or not ids:
            raise LookupError(f"no run matches {prefix!r}")
        if len(ids) > 1:
            shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
            raise LookupError(f"{prefix!r} matches several runs: {shown}")
        return ids[0]

    def list_runs(self) -> list[RunRecord]:
        """All runs, newest first."""
        with self._session(write=False) as conn:
            rows = conn.execute(f"SELECT {_RUN_SELECT} FROM runs ORDER BY created_at DESC, run_id").fetchall()
        return [self._run(row) for row in rows]

    def update_run(self, run_id: str, **updates: Any) -> None:
        """Set some of a run's fields (status, best_node_id, config, ...); bumps updated_at."""
        unknown = set(updates) - _UPDATABLE_RUN_FIELDS
        if unknown:
            raise ValueError(f"cannot update run field(s): {', '.join(sorted(unknown))}")
        if "config" in updates:
            updates["config"] = json.dumps(updates["config"], sort_keys=True)
        updates["updated_at"] = time.time()
        assignments = ", ".join(f"{name} = ?" for name in updates)  # names are whitelisted above
        with self._session(write=True) as conn:
            changed = conn.execute(f"UPDATE runs SET {assignments} WHERE run_id = ?",
                                   [*updates.values(), run_id]).fetchone()[0]
        if not changed:
            raise LookupError(f"no run {run_id!r} in {self.path}")

    def run_node_counts(self) -> dict[str, int]:
        """run_id -> number of nodes, for every run (0 for runs without nodes)."""
        with self._session(write=False) as conn:
            rows = conn.execute("SELECT r.run_id, count(n.node_id) FROM runs r "
                                "LEFT JOIN nodes n ON n.run_id = r.run_id GROUP BY r.run_id").fetchall()
        return dict(rows)

    # ---- nodes -------------------------------------------------------------------------------

    def next_node_id(self, run_id: str) -> int:
        with self._session(write=False) as conn:
            return conn.execute("SELECT coalesce(max(node_id), 0) + 1 FROM nodes WHERE run_id = ?",
                                [run_id]).fetchone()[0]

    def add_node(self, node: Node, cases: Iterable[CaseRecord] = ()) -> None:
        """Store a node and its cases atomically: both or neither (the per-node checkpoint)."""
        if node.parent_id is not None and node.parent_id >= node.node_id:
            # Parents always precede children; this also keeps the recursive walks acyclic.
            raise ValueError(f"node {node.node_id}: parent_id {node.parent_id} must be smaller")
        case_rows = [tuple(getattr(case, name) for name in _CASE_NAMES) for case in cases]
        if any((c[0], c[1]) != (node.run_id, node.node_id) for c in case_rows):
            raise ValueError(f"cases of node {node.run_id}/{node.node_id} must carry its run_id and node_id")
        batch = self._own_batch()
        if batch is not None:
            batch.node_rows.append(self._node_row(node))
            batch.case_rows.extend(case_rows)
            if len(batch.node_rows) + len(batch.case_rows) >= _FLUSH_ROWS:
                self._flush(batch)
            return
        key = f"{node.run_id}/{node.node_id}"
        with self._session(write=True) as conn:
            try:
                self._insert_rows(conn, "nodes", schema.NODE_COLUMNS, [self._node_row(node)])
            except duckdb.ConstraintException as e:
                raise StoreError(f"node {key} already exists in {self.path}") from e
            try:
                self._insert_rows(conn, "evaluations", schema.CASE_COLUMNS, case_rows)
            except duckdb.ConstraintException as e:
                raise StoreError(f"node {key}: duplicate case: {_first_line(e)}") from e

    def get_node(self, run_id: str, node_id: int) -> Node | None:
        found = self._select_nodes(f"SELECT {_NODE_SELECT} FROM nodes n WHERE run_id = ? AND node_id = ?",
                                   [run_id, node_id])
        return found[0] if found else None

    def nodes(self, run_id: str) -> list[Node]:
        return self._select_nodes(f"SELECT {_NODE_SELECT} FROM nodes n WHERE run_id = ? ORDER BY node_id",
                                  [run_id])

    def count_nodes(self, run_id: str) -> int:
        with self._session(write=False) as conn:
            return conn.execute("SELECT count(*) FROM nodes WHERE run_id = ?", [run_id]).fetchone()[0]

    def best_nodes(self, run_id: str, k: int = 1) -> list[Node]:
        """The k fittest non-buggy nodes (ties: lower node_id first)."""
        return self._select_nodes(
            f"SELECT {_NODE_SELECT} FROM nodes n WHERE run_id = ? AND NOT is_buggy AND NOT isnan(fitness) "
            "QUALIFY row_number() OVER (ORDER BY fitness DESC, node_id) <= ? ORDER BY fitness DESC, node_id",
            [run_id, k])

    def children_counts(self, run_id: str) -> dict[int | None, int]:
        """parent_id -> number of children; the None key counts the root's (drafted) children."""
        with self._session(write=False) as conn:
            rows = conn.execute("SELECT parent_id, count(*) FROM nodes WHERE run_id = ? GROUP BY parent_id",
                                [run_id]).fetchall()
        return dict(rows)

    def ancestors(self, run_id: str, node_id: int) -> list[Node]:
        """The node's ancestors, nearest parent first, excluding the node itself."""
        return self._select_nodes(
            "WITH RECURSIVE up(node_id, parent_id, dist) AS ("
            " SELECT node_id, parent_id, 0 FROM nodes WHERE run_id = $run AND node_id = $node"
            " UNION ALL SELECT p.node_id, p.parent_id, up.dist + 1 FROM up"
            " JOIN nodes p ON p.run_id = $run AND p.node_id = up.parent_id)"
            f" SELECT {_NODE_SELECT} FROM up JOIN nodes n ON n.run_id = $run AND n.node_id = up.node_id"
            " WHERE up.dist > 0 ORDER BY up.dist",
            {"run": run_id, "node": node_id})

    def subtree(self, run_id: str, node_id: int) -> list[Node]:
        """The node and all its descendants, ordered by depth below it, then node_id."""
        return self._select_nodes(
            "WITH RECURSIVE down(node_id, dist) AS ("
            " SELECT node_id, 0 FROM nodes WHERE run_id = $run AND node_id = $node"
            " UNION ALL SELECT c.node_id, down.dist + 1 FROM down"
            " JOIN nodes c ON c.run_id = $run AND c.parent_id = down.node_id)"
            f" SELECT {_NODE_SELECT} FROM down JOIN nodes n ON n.run_id = $run AND n.node_id = down.node_id"
            " ORDER BY down.dist, n.node_id",
            {"run": run_id, "node": node_id})

    def cases(self, run_id: str, node_id: int) -> list[CaseRecord]:
        with self._session(write=False) as conn:
            rows = conn.execute(f"SELECT {', '.join(_CASE_NAMES)} FROM evaluations WHERE run_id = ? AND node_id = ? "
                                "ORDER BY case_name", [run_id, node_id]).fetchall()
        return [CaseRecord(**dict(zip(_CASE_NAMES, row, strict=True))) for row in rows]

    # ---- evaluation cache --------------------------------------------------------------------

    def cached_evaluation(self, candidate_hash: str, spec_hash: str, target: str,
                          evaluator_version: str) -> dict | None:
        """A stored result for identical source, spec, target and evaluator, or None."""
        with self._session(write=False) as conn:
            row = conn.execute("SELECT result FROM eval_cache WHERE candidate_hash = ? AND spec_hash = ? "
                               "AND target = ? AND evaluator_version = ?",
                               [candidate_hash, spec_hash, target, evaluator_version]).fetchone()
        return json.loads(row[0]) if row else None

    def cache_evaluation(self, candidate_hash: str, spec_hash: str, target: str, evaluator_version: str,
                         result: dict) -> None:
        with self._session(write=True) as conn:
            conn.execute("INSERT OR REPLACE INTO eval_cache VALUES (?, ?, ?, ?, ?, ?)",
                         [candidate_hash, spec_hash, target, evaluator_version,
                          json.dumps(result, sort_keys=True), time.time()])
