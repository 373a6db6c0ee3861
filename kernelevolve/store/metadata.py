"""The DuckDB metadata store: runs, search-graph nodes, per-case evaluations, evaluation cache.

This module holds the store's API and its SQL. How a call reaches the file while other processes
read and write it (a lock file, a short attachment per call, backoff, fairness) lives in
:mod:`kernelevolve.store.duckdb_access`: every public method here runs in one of its sessions.

``batch()`` keeps the file attached and one transaction open for many writes (bulk inserts);
nodes added inside it are buffered and written column-wise, ~50x faster than row by row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import duckdb

from kernelevolve.store import schema
from kernelevolve.store.duckdb_access import LockedDuckDBFile, StoreError, first_line  # StoreError: re-exported
from kernelevolve.store.records import CaseRecord, RunRecord
from search.node import Node

_FLUSH_ROWS = 5000  # buffered rows (nodes + cases) that make a batch write them out early
_NODE_NAMES = [name for name, _ in schema.NODE_COLUMNS]
_CASE_NAMES = [name for name, _ in schema.CASE_COLUMNS]
_NODE_SELECT = ", ".join(f"n.{name}" for name in _NODE_NAMES)
_RUN_SELECT = ", ".join(schema.RUN_COLUMNS)
_UPDATABLE_RUN_FIELDS = {f.name for f in fields(RunRecord)} - {"run_id", "created_at", "updated_at"}


@dataclass
class _PendingRows:
    """Rows added inside a batch and not yet inserted: written column-wise when flushed."""

    node_rows: list[tuple] = field(default_factory=list)
    case_rows: list[tuple] = field(default_factory=list)


class MetadataStore:
    """Runs, nodes, cases and the evaluation cache in one DuckDB file; see the module docstring."""

    def __init__(self, path: Path | str, lock_timeout_s: float = 60.0) -> None:
        self._file: LockedDuckDBFile[_PendingRows] = LockedDuckDBFile(
            path, lock_timeout_s, flush=self._write_pending_rows)
        self.path = self._file.path
        self.lock_timeout_s = lock_timeout_s
        self._ensure_schema()

    def __repr__(self) -> str:
        return f"MetadataStore({str(self.path)!r})"

    # ---- opening and batches -----------------------------------------------------------------

    def _ensure_schema(self) -> None:
        # The common case (an up-to-date store) needs only a shared, read-only look.
        if self.path.exists() and self.schema_version() == schema.SCHEMA_VERSION:
            return
        try:
            with self._file.session(write=True) as conn:
                schema.migrate(conn)
        except schema.SchemaTooNewError as e:
            raise StoreError(f"metadata store {self.path} has schema v{e.found}, newer than this "
                             f"KernelEvolve (v{e.supported}); upgrade KernelEvolve") from e

    @contextmanager
    def batch(self) -> Iterator[MetadataStore]:
        """Keep the file attached and one transaction open for many writes, committed at exit.

        Any error inside rolls the whole batch back (DuckDB has no savepoints), and a duplicate
        node added inside surfaces when the buffer is flushed: at exit or before the next read.
        Other processes are kept out for the duration, so keep batches short. Nested batches join.
        """
        with self._file.batch(_PendingRows):
            yield self

    def _write_pending_rows(self, conn: duckdb.DuckDBPyConnection, pending: _PendingRows) -> None:
        """Insert a batch's buffered rows and empty the buffer: the flush hook of ``self._file``."""
        nodes, cases = pending.node_rows, pending.case_rows
        pending.node_rows, pending.case_rows = [], []
        try:
            self._insert_rows(conn, "nodes", schema.NODE_COLUMNS, nodes)
            self._insert_rows(conn, "evaluations", schema.CASE_COLUMNS, cases)
        except duckdb.ConstraintException as e:
            raise StoreError(f"metadata store {self.path}: duplicate node or case in batch: "
                             f"{first_line(e)}") from e

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
        with self._file.session(write=False) as conn:
            return [self._node(row) for row in conn.execute(sql, params).fetchall()]

    # ---- schema and runs ---------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._file.session(write=False) as conn:
            return schema.read_version(conn)

    def create_run(self, run: RunRecord) -> None:
        now = time.time()
        values = asdict(run)
        values["config"] = json.dumps(run.config, sort_keys=True)
        values["created_at"] = run.created_at or now
        values["updated_at"] = run.updated_at or values["created_at"]
        placeholders = ", ".join("?" * len(schema.RUN_COLUMNS))
        with self._file.session(write=True) as conn:
            try:
                conn.execute(f"INSERT INTO runs ({_RUN_SELECT}) VALUES ({placeholders})",
                             [values[name] for name in schema.RUN_COLUMNS])
            except duckdb.ConstraintException as e:
                raise StoreError(f"run {run.run_id} already exists in {self.path}") from e

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._file.session(write=False) as conn:
            row = conn.execute(f"SELECT {_RUN_SELECT} FROM runs WHERE run_id = ?", [run_id]).fetchone()
        return self._run(row) if row else None

    def resolve_run_id(self, prefix: str) -> str:
        """The run id equal to ``prefix``, else the only one starting with it (git-style)."""
        with self._file.session(write=False) as conn:
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
        with self._file.session(write=False) as conn:
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
        with self._file.session(write=True) as conn:
            changed = conn.execute(f"UPDATE runs SET {assignments} WHERE run_id = ?",
                                   [*updates.values(), run_id]).fetchone()[0]
        if not changed:
            raise LookupError(f"no run {run_id!r} in {self.path}")

    def set_status(self, run_ids: list[str], status: str) -> None:
        """Set many runs' status in one session: an interrupted sweep marks its unfinished runs before the
        exit deadline (one session per run, 94 runs beside a busy lowering thread, missed it)."""
        if not run_ids:
            return
        marks = ", ".join("?" for _ in run_ids)
        with self._file.session(write=True) as conn:
            conn.execute(f"UPDATE runs SET status = ?, updated_at = ? WHERE run_id IN ({marks})",
                         [status, time.time(), *run_ids])

    def run_node_counts(self) -> dict[str, int]:
        """run_id -> number of nodes, for every run (0 for runs without nodes)."""
        with self._file.session(write=False) as conn:
            rows = conn.execute("SELECT r.run_id, count(n.node_id) FROM runs r "
                                "LEFT JOIN nodes n ON n.run_id = r.run_id GROUP BY r.run_id").fetchall()
        return dict(rows)

    # ---- nodes -------------------------------------------------------------------------------

    def next_node_id(self, run_id: str) -> int:
        with self._file.session(write=False) as conn:
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
        pending = self._file.batch_buffer()
        if pending is not None:
            pending.node_rows.append(self._node_row(node))
            pending.case_rows.extend(case_rows)
            if len(pending.node_rows) + len(pending.case_rows) >= _FLUSH_ROWS:
                self._file.flush_batch()
            return
        key = f"{node.run_id}/{node.node_id}"
        with self._file.session(write=True) as conn:
            try:
                self._insert_rows(conn, "nodes", schema.NODE_COLUMNS, [self._node_row(node)])
            except duckdb.ConstraintException as e:
                raise StoreError(f"node {key} already exists in {self.path}") from e
            try:
                self._insert_rows(conn, "evaluations", schema.CASE_COLUMNS, case_rows)
            except duckdb.ConstraintException as e:
                raise StoreError(f"node {key}: duplicate case: {first_line(e)}") from e

    def get_node(self, run_id: str, node_id: int) -> Node | None:
        found = self._select_nodes(f"SELECT {_NODE_SELECT} FROM nodes n WHERE run_id = ? AND node_id = ?",
                                   [run_id, node_id])
        return found[0] if found else None

    def nodes(self, run_id: str) -> list[Node]:
        return self._select_nodes(f"SELECT {_NODE_SELECT} FROM nodes n WHERE run_id = ? ORDER BY node_id",
                                  [run_id])

    def count_nodes(self, run_id: str) -> int:
        with self._file.session(write=False) as conn:
            return conn.execute("SELECT count(*) FROM nodes WHERE run_id = ?", [run_id]).fetchone()[0]

    def best_nodes(self, run_id: str, k: int = 1) -> list[Node]:
        """The k fittest non-buggy nodes (ties: lower node_id first)."""
        return self._select_nodes(
            f"SELECT {_NODE_SELECT} FROM nodes n WHERE run_id = ? AND NOT is_buggy AND NOT isnan(fitness) "
            "ORDER BY fitness DESC, node_id LIMIT ?",  # top-k, not a window over the whole run (3x at 100k)
            [run_id, k])

    def case_winners(self, run_id: str) -> dict[str, tuple[int, float]]:
        """case -> (node_id, latency_ms) of the fastest correct node on that case (ties: lower node_id).

        Only nodes correct on every case compete: a kernel that fails one shape is not deployable on any,
        since the dispatcher routes by shape and the failure may hide a bug the passing shapes missed."""
        with self._file.session(write=False) as conn:
            rows = conn.execute(
                "SELECT e.case_name, e.node_id, e.latency_ms FROM evaluations e JOIN nodes n USING (run_id, node_id)"
                " WHERE e.run_id = ? AND NOT n.is_buggy AND NOT isnan(n.fitness) AND e.latency_ms IS NOT NULL"
                " AND e.latency_ms > 0"
                " QUALIFY row_number() OVER (PARTITION BY e.case_name ORDER BY e.latency_ms, e.node_id) = 1"
                " ORDER BY e.case_name", [run_id]).fetchall()
        return {case: (node_id, latency) for case, node_id, latency in rows}

    def best_for_op(self, op: str, k: int, hw: str, exclude_run: str | None = None) -> list[dict[str, Any]]:
        """Distinct correct kernels of ``op`` from other runs, for seeding a new run: each target's best in
        turn (``hw`` first, because fitness is only comparable within a target), then each target's second."""
        with self._file.session(write=False) as conn:
            rows = conn.execute(
                "WITH distinct_kernels AS (SELECT r.hw, n.run_id, n.node_id, n.fitness, n.path_ref"
                " FROM nodes n JOIN runs r USING (run_id)"
                " WHERE r.op = ? AND r.run_id <> ? AND NOT n.is_buggy AND NOT isnan(n.fitness)"
                " QUALIFY row_number() OVER (PARTITION BY n.candidate_hash ORDER BY r.hw = ? DESC, n.fitness DESC)"
                " = 1), ranked AS (SELECT *, row_number() OVER (PARTITION BY hw ORDER BY fitness DESC, run_id,"
                " node_id) AS rank_in_hw FROM distinct_kernels)"
                " SELECT hw, run_id, node_id, fitness, path_ref FROM ranked"
                " ORDER BY rank_in_hw, hw <> ?, hw LIMIT ?",
                [op, exclude_run or "", hw, hw, k]).fetchall()
        return [{"hw": h, "run_id": r, "node_id": n, "fitness": f, "path_ref": p} for h, r, n, f, p in rows]

    def children_counts(self, run_id: str) -> dict[int | None, int]:
        """parent_id -> number of children; the None key counts the root's (drafted) children."""
        with self._file.session(write=False) as conn:
            rows = conn.execute("SELECT parent_id, count(*) FROM nodes WHERE run_id = ? GROUP BY parent_id",
                                [run_id]).fetchall()
        return dict(rows)

    def children(self, run_id: str, parent_id: int) -> list[Node]:
        return self._select_nodes(f"SELECT {_NODE_SELECT} FROM nodes n WHERE run_id = ? AND parent_id = ? "
                                  "ORDER BY node_id", [run_id, parent_id])

    def failure_summary(self, run_id: str) -> list[tuple[str, int, str]]:
        """(status, count, latest reason) per failure class of a run, most frequent first."""
        with self._file.session(write=False) as conn:
            return conn.execute(
                "SELECT status, count(*), arg_max(reason, node_id) FROM nodes WHERE run_id = ? AND is_buggy "
                "GROUP BY status ORDER BY count(*) DESC, status", [run_id]).fetchall()

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
        with self._file.session(write=False) as conn:
            rows = conn.execute(f"SELECT {', '.join(_CASE_NAMES)} FROM evaluations WHERE run_id = ? AND node_id = ? "
                                "ORDER BY case_name", [run_id, node_id]).fetchall()
        return [CaseRecord(**dict(zip(_CASE_NAMES, row, strict=True))) for row in rows]

    # ---- campaigns ---------------------------------------------------------------------------

    def create_campaign(self, campaign_id: str, name: str, plan_hash: str, config: dict[str, Any]) -> None:
        now = time.time()
        with self._file.session(write=True) as conn:
            try:
                conn.execute("INSERT INTO campaigns VALUES (?, ?, ?, ?, 'running', ?, ?)",
                             [campaign_id, name, plan_hash, json.dumps(config, sort_keys=True), now, now])
            except duckdb.ConstraintException as e:
                raise StoreError(f"campaign {name!r} already exists in {self.path}") from e

    def campaign_by_name(self, name: str) -> dict[str, Any] | None:
        with self._file.session(write=False) as conn:
            row = conn.execute("SELECT campaign_id, name, plan_hash, config, status, created_at, updated_at"
                               " FROM campaigns WHERE name = ?", [name]).fetchone()
        if row is None:
            return None
        keys = ("campaign_id", "name", "plan_hash", "config", "status", "created_at", "updated_at")
        found = dict(zip(keys, row, strict=True))
        found["config"] = json.loads(found["config"])
        return found

    def set_campaign_status(self, campaign_id: str, status: str) -> None:
        with self._file.session(write=True) as conn:
            conn.execute("UPDATE campaigns SET status = ?, updated_at = ? WHERE campaign_id = ?",
                         [status, time.time(), campaign_id])

    def campaign_runs(self, campaign_id: str) -> dict[int, RunRecord]:
        """slot -> run, for the runs a campaign has created so far (the newest, where a slot has several)."""
        with self._file.session(write=False) as conn:
            rows = conn.execute(f"SELECT {_RUN_SELECT} FROM runs WHERE json_extract_string(config, "
                                "'$.campaign.id') = ? ORDER BY created_at, run_id", [campaign_id]).fetchall()
        runs = [self._run(row) for row in rows]
        return {int(r.config["campaign"]["slot"]): r for r in runs}

    # ---- evaluation cache --------------------------------------------------------------------

    def cached_evaluation(self, candidate_hash: str, spec_hash: str, target: str,
                          evaluator_version: str) -> dict | None:
        """A stored result for identical source, spec, target and evaluator, or None."""
        with self._file.session(write=False) as conn:
            row = conn.execute("SELECT result FROM eval_cache WHERE candidate_hash = ? AND spec_hash = ? "
                               "AND target = ? AND evaluator_version = ?",
                               [candidate_hash, spec_hash, target, evaluator_version]).fetchone()
        return json.loads(row[0]) if row else None

    def cache_evaluation(self, candidate_hash: str, spec_hash: str, target: str, evaluator_version: str,
                         result: dict) -> None:
        with self._file.session(write=True) as conn:
            conn.execute("INSERT OR REPLACE INTO eval_cache VALUES (?, ?, ?, ?, ?, ?)",
                         [candidate_hash, spec_hash, target, evaluator_version,
                          json.dumps(result, sort_keys=True), time.time()])
