"""Versioned schema of the DuckDB metadata store, and its migrations.

Why migrations rather than one ``CREATE TABLE`` script: stores outlive code versions (a
campaign's history is worth keeping across upgrades), so each schema change is appended as a
new migration and every store is brought forward step by step, inside one transaction, the
first time a newer KernelEvolve opens it. Never edit a migration that has shipped; append one.

``schema_meta`` holds a single row with the version the store is at. A store stamped with a
version newer than :data:`SCHEMA_VERSION` is refused rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

# Migration i (0-based) brings a store from version i to version i + 1. Statements must be
# idempotent (IF NOT EXISTS) so that a half-known state never breaks a re-run.
MIGRATIONS: list[list[str]] = [
    # v1: runs, the search graph's nodes, per-case evaluations and the evaluation cache.
    [
        """CREATE TABLE IF NOT EXISTS runs (
            run_id VARCHAR PRIMARY KEY,
            op VARCHAR NOT NULL,
            op_path VARCHAR NOT NULL DEFAULT '',
            spec_hash VARCHAR NOT NULL DEFAULT '',
            hw VARCHAR NOT NULL,
            strategy VARCHAR NOT NULL,
            operator VARCHAR NOT NULL,
            budget INTEGER NOT NULL,
            seed BIGINT NOT NULL,
            status VARCHAR NOT NULL,
            simulated BOOLEAN NOT NULL DEFAULT false,
            config VARCHAR NOT NULL DEFAULT '{}',  -- JSON text
            best_node_id INTEGER,
            created_at DOUBLE NOT NULL,
            updated_at DOUBLE NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS nodes (
            run_id VARCHAR NOT NULL,
            node_id INTEGER NOT NULL,
            parent_id INTEGER,  -- NULL: drafted from the root (the PyTorch reference)
            depth INTEGER NOT NULL,
            candidate_hash VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            reason VARCHAR NOT NULL DEFAULT '',
            is_buggy BOOLEAN NOT NULL,
            fitness DOUBLE NOT NULL,
            speedup_vs_eager DOUBLE,
            speedup_vs_compile DOUBLE,
            path_ref VARCHAR NOT NULL DEFAULT '',
            operator_meta VARCHAR NOT NULL DEFAULT '{}',  -- JSON text
            tokens_in BIGINT NOT NULL DEFAULT 0,
            tokens_out BIGINT NOT NULL DEFAULT 0,
            cost_usd DOUBLE NOT NULL DEFAULT 0,
            eval_seconds DOUBLE NOT NULL DEFAULT 0,
            created_at DOUBLE NOT NULL,
            PRIMARY KEY (run_id, node_id)
        )""",
        # children_counts / subtree walk parent -> children.
        "CREATE INDEX IF NOT EXISTS nodes_by_parent ON nodes (run_id, parent_id)",
        """CREATE TABLE IF NOT EXISTS evaluations (
            run_id VARCHAR NOT NULL,
            node_id INTEGER NOT NULL,
            case_name VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            latency_ms DOUBLE,
            eager_ms DOUBLE,
            compile_ms DOUBLE,
            max_abs_err DOUBLE,
            error VARCHAR NOT NULL DEFAULT '',
            PRIMARY KEY (run_id, node_id, case_name)
        )""",
        """CREATE TABLE IF NOT EXISTS eval_cache (
            candidate_hash VARCHAR NOT NULL,
            spec_hash VARCHAR NOT NULL,
            target VARCHAR NOT NULL,
            evaluator_version VARCHAR NOT NULL,
            result VARCHAR NOT NULL,  -- JSON text
            created_at DOUBLE NOT NULL,
            PRIMARY KEY (candidate_hash, spec_hash, target, evaluator_version)
        )""",
    ],
    # v2: campaigns. A run belongs to a campaign through its config ({"campaign": {"id", "slot"}}), written in
    # the same INSERT as the run, so a crash can never leave a run that its campaign does not know about.
    [
        """CREATE TABLE IF NOT EXISTS campaigns (
            campaign_id VARCHAR PRIMARY KEY,
            name VARCHAR NOT NULL UNIQUE,
            plan_hash VARCHAR NOT NULL,
            config VARCHAR NOT NULL DEFAULT '{}',  -- JSON text: the normalised plan
            status VARCHAR NOT NULL,
            created_at DOUBLE NOT NULL,
            updated_at DOUBLE NOT NULL
        )""",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)

# The latest shape of the tables the store bulk-inserts into, as (column, DuckDB type) in table
# order. The store binds whole columns as typed lists, so the types must be spelled out; a test
# checks these against the migrated tables. Update together with any migration that changes them.
NODE_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "VARCHAR"), ("node_id", "INTEGER"), ("parent_id", "INTEGER"), ("depth", "INTEGER"),
    ("candidate_hash", "VARCHAR"), ("status", "VARCHAR"), ("reason", "VARCHAR"), ("is_buggy", "BOOLEAN"),
    ("fitness", "DOUBLE"), ("speedup_vs_eager", "DOUBLE"), ("speedup_vs_compile", "DOUBLE"),
    ("path_ref", "VARCHAR"), ("operator_meta", "VARCHAR"), ("tokens_in", "BIGINT"), ("tokens_out", "BIGINT"),
    ("cost_usd", "DOUBLE"), ("eval_seconds", "DOUBLE"), ("created_at", "DOUBLE"),
]
CASE_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "VARCHAR"), ("node_id", "INTEGER"), ("case_name", "VARCHAR"), ("status", "VARCHAR"),
    ("latency_ms", "DOUBLE"), ("eager_ms", "DOUBLE"), ("compile_ms", "DOUBLE"), ("max_abs_err", "DOUBLE"),
    ("error", "VARCHAR"),
]
RUN_COLUMNS: list[str] = [
    "run_id", "op", "op_path", "spec_hash", "hw", "strategy", "operator", "budget", "seed", "status",
    "simulated", "config", "best_node_id", "created_at", "updated_at",
]


class SchemaTooNewError(Exception):
    """The store was written by a newer KernelEvolve; the caller turns this into a StoreError."""

    def __init__(self, found: int, supported: int) -> None:
        super().__init__(f"schema v{found} is newer than v{supported}")
        self.found = found
        self.supported = supported


def read_version(conn: duckdb.DuckDBPyConnection) -> int:
    """The store's schema version; 0 for an empty (or foreign) DuckDB file. Works read-only."""
    has_meta = conn.execute(
        "SELECT count(*) FROM information_schema.tables"
        " WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = 'schema_meta'"
    ).fetchone()[0]
    if not has_meta:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_meta").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: duckdb.DuckDBPyConnection, migrations: Sequence[Sequence[str]] = MIGRATIONS) -> int:
    """Bring the store up to ``len(migrations)``; returns the version it was at.

    The caller must hold a read-write connection inside an open transaction: the version check
    and the migrations then commit (or roll back) together, and because DuckDB's file lock admits
    one writing process at a time, two processes opening a new store at once cannot both migrate.
    ``migrations`` is a parameter only so tests can append a future migration.
    """
    target = len(migrations)
    conn.execute("CREATE TABLE IF NOT EXISTS schema_meta (version INTEGER NOT NULL)")
    found = read_version(conn)
    if found > target:
        raise SchemaTooNewError(found, target)
    for statements in migrations[found:]:
        for statement in statements:
            conn.execute(statement)
    if found < target:
        conn.execute("DELETE FROM schema_meta")
        conn.execute("INSERT INTO schema_meta VALUES (?)", [target])
    return found
