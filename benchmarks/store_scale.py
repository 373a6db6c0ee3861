"""How the DuckDB metadata store behaves at 1M-10M nodes: fill, inserts, best-K, UCT statistics, ancestors, resume.

Why: a campaign keeps every node of every run in one store, so the store grows without bound while each search
step still issues several store calls (attach, query, detach) and MCTS re-reads its whole run per step. This
measures those production paths on a synthetic store of N nodes (many 10k-node runs, one 100k-node run and, at
10M, one 1M-node run), and times an SQL aggregate as a candidate replacement for the in-Python ``tree_stats``.
Bulk rows are loaded with DuckDB directly (setup, timed apart) into a store created by MetadataStore, so the
schema and its indexes are exactly the production ones.
Usage: nice -n 10 python benchmarks/store_scale.py --sizes 1000000 10000000 --out benchmarks/results/store_scale
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernelevolve.store.metadata import MetadataStore  # noqa: E402
from kernelevolve.store.records import CaseRecord, RunRecord  # noqa: E402
from search.mcts import tree_stats  # noqa: E402
from search.node import Node  # noqa: E402

# Status mix: 70% ok, 30% buggy (the buggy statuses of search.node), by cumulative share.
STATUS_CUTS = [(0.70, "ok"), (0.80, "incorrect"), (0.87, "compile_error"), (0.93, "runtime_error"),
               (0.96, "timeout"), (0.98, "crash"), (1.01, "rejected")]
P_DRAFT, P_RECENT = 0.002, 0.6  # parent: the root; a recent node (chains, depth ~2.5 ln n); else uniform earlier
TARGET, EVALUATOR_VERSION = "h200", "1"
SQL_STATUS = "CASE " + " ".join(f"WHEN u < {cut} THEN '{s}'" for cut, s in STATUS_CUTS) + " END"
RUN_ID_SQL = "substr(md5('run' || run_idx), 1, 8)"  # uuid-like 8 hex digits, as run_records.create_run makes them

# Candidate replacement for search.mcts.tree_stats: per node, children, subtree size and subtree mean fitness
# (buggy or NaN = 0) in one statement. ``walk`` is the ancestor closure: each node's fitness climbs to every
# ancestor. A parent outside the run is treated as the root, as tree_stats does. The root row has node_id NULL.
UCT_SQL = """
WITH RECURSIVE run AS MATERIALIZED (SELECT node_id, parent_id, is_buggy, fitness FROM nodes WHERE run_id = $run),
base AS MATERIALIZED (
    SELECT n.node_id, p.node_id AS parent_id,
           CASE WHEN n.is_buggy OR isnan(n.fitness) THEN 0.0 ELSE n.fitness END AS fz
    FROM run n LEFT JOIN run p ON p.node_id = n.parent_id),
walk(anc, up, fz) AS (
    SELECT node_id, parent_id, fz FROM base
    UNION ALL
    SELECT w.up, b.parent_id, w.fz FROM walk w JOIN base b ON b.node_id = w.up),
sub AS (SELECT anc AS node_id, count(*) AS visits, sum(fz) AS total FROM walk GROUP BY anc),
kids AS (SELECT parent_id AS node_id, count(*) AS n FROM base WHERE parent_id IS NOT NULL GROUP BY parent_id)
SELECT s.node_id, coalesce(k.n, 0), s.visits, s.total / s.visits FROM sub s LEFT JOIN kids k USING (node_id)
UNION ALL
SELECT NULL, count(*) FILTER (WHERE parent_id IS NULL), count(*), sum(fz) / count(*) FROM base
"""


# Bulk rows from the temp table ``g`` (one row per node); {cases} evaluation rows per node; a cache row per node
# whose status the runner caches (all but crash and timeout). The cache JSON carries the top-level fields only.
FILL_SQL = {
    "nodes_s": """INSERT INTO nodes SELECT run_id, node_id, CASE WHEN parent_id > 0 THEN parent_id END, depth,
        hash, status, CASE WHEN status = 'ok' THEN '' ELSE status || ': case0 failed' END, status <> 'ok',
        CASE WHEN status = 'ok' THEN fit ELSE 0.0 END, CASE WHEN status = 'ok' THEN fit END,
        CASE WHEN status = 'ok' THEN fit * 0.8 END, 'kernels/' || hash || '.py',
        '{{"operator": "offline", "mutation": "block_size"}}', 2000 + (r * 3000)::BIGINT, 500 + (r * 1500)::BIGINT,
        r * 0.05, 1 + r * 20, 1.7e9 + run_idx * 3600 + node_id * 0.1 FROM g""",
    "evaluations_s": """INSERT INTO evaluations SELECT run_id, node_id, 'case' || c, status,
        CASE WHEN status = 'ok' THEN 0.05 + r END, CASE WHEN status = 'ok' THEN (0.05 + r) * fit END,
        CASE WHEN status = 'ok' THEN (0.05 + r) * fit * 0.8 END, CASE WHEN status = 'ok' THEN 1e-6 * r END,
        CASE WHEN status = 'ok' THEN '' ELSE 'case' || c || ': ' || status END FROM g, range({cases}) t(c)""",
    "eval_cache_s": f"""INSERT OR REPLACE INTO eval_cache SELECT hash, sha256('spec' || run_idx), '{TARGET}',
        '{EVALUATOR_VERSION}', json_object('status', status, 'reason', '', 'fitness', fit, 'target', '{TARGET}',
        'simulated', false, 'timed', true, 'speedup_vs_eager', fit, 'speedup_vs_compile', fit * 0.8,
        'launches_per_forward', 1.0, 'roofline_fraction', r, 'bottleneck', 'memory')::VARCHAR,
        1.7e9 + run_idx * 3600 + node_id * 0.1 FROM g WHERE status NOT IN ('crash', 'timeout')""",
}


class StoreGraphView:
    """``search.GraphView`` over one run answered by SQL, one query per question: the production path before
    the orchestrator mirrored each run in memory (``RunGraph``), kept here to measure what SQL costs at scale."""

    def __init__(self, store: MetadataStore, run_id: str) -> None:
        self.store, self.run_id = store, run_id

    def count(self) -> int:
        return self.store.count_nodes(self.run_id)

    def best(self, k: int) -> list[Node]:
        return self.store.best_nodes(self.run_id, k)

    def nodes(self) -> list[Node]:
        return self.store.nodes(self.run_id)

    def children_counts(self) -> dict[int | None, int]:
        return self.store.children_counts(self.run_id)


def spread(xs: list[float]) -> dict[str, Any]:
    """Median, p10/p90 and min/max of latencies in seconds (rounded to microseconds)."""
    a = np.asarray(xs, dtype=float)
    q = {k: float(np.percentile(a, p)) for k, p in (("median", 50), ("p10", 10), ("p90", 90))}
    return {**{k: round(v, 6) for k, v in q.items()}, "min": round(float(a.min()), 6),
            "max": round(float(a.max()), 6), "n": len(xs)}


def timed(fn: Callable[[], Any], reps: int, budget_s: float = 1e9) -> tuple[dict[str, Any], Any]:
    """Call ``fn`` ``reps`` times (fewer once ``budget_s`` is spent); its latency spread and last result."""
    times: list[float] = []
    result, start = None, time.monotonic()
    for _ in range(reps):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
        if time.monotonic() - start > budget_s:
            break
    return spread(times), result


def layout(n_total: int, run_size: int) -> tuple[list[int], dict[str, int]]:
    """Run sizes (index = run_idx) and the probed runs: one of ``run_size``, the 100k run and the biggest run."""
    big = max(n_total // 10, 100_000)
    probe_sizes = [big] + ([100_000] if big != 100_000 else [])
    rest = n_total - sum(probe_sizes)
    runs = [run_size] * (rest // run_size) + ([rest % run_size] if rest % run_size else [])
    mid = len(runs) // 2  # the probed runs sit in the middle of the insertion order, not at an edge of the file
    sizes = runs[:mid] + probe_sizes + runs[mid:]
    return sizes, {"10k": mid - 1, "big": mid, "100k": mid + len(probe_sizes) - 1}


def make_chunk(run_idx: list[int], sizes: list[int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Columns for whole runs: node ids 1..n, parents forming trees (parent < child), depth, status draw, fitness."""
    counts = np.asarray(sizes)
    total = int(counts.sum())
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    local = np.arange(total) - offsets + 1
    u = rng.random(total)
    recent = np.maximum(local - rng.geometric(0.3, total), 1)
    uniform = 1 + np.floor(rng.random(total) * np.maximum(local - 1, 1)).astype(np.int64)
    parent = np.where(u < P_DRAFT, 0, np.where(u < P_DRAFT + P_RECENT, recent, uniform))
    parent[local <= 3] = 0
    jump = np.where(parent > 0, offsets + parent - 1, -1)  # row of the parent; pointer jumping gives depth
    dist = (jump >= 0).astype(np.int64)
    while (jump >= 0).any():
        ok = jump >= 0
        nxt = np.where(ok, jump, 0)
        dist = dist + np.where(ok, dist[nxt], 0)
        jump = np.where(ok, jump[nxt], -1)
    fitness = rng.lognormal(0.0, 0.5, total) * (1 + 0.01 * dist)  # deeper is a bit better, as in a search
    fitness[rng.random(total) < 0.005] = np.nan  # a few unmeasured nodes
    return {"run_idx": np.repeat(np.asarray(run_idx), counts).astype(np.int32), "node_id": local.astype(np.int32),
            "parent_id": parent.astype(np.int32), "depth": (dist + 1).astype(np.int32),
            "u": rng.random(total), "fit": fitness, "r": rng.random(total)}


def database_size(con: duckdb.DuckDBPyConnection, name: str | None = None) -> dict[str, float]:
    """Blocks in use and free (left by rewritten data or indexes) of an attached database, in MiB."""
    row = con.execute("SELECT block_size, used_blocks, free_blocks FROM pragma_database_size() "
                      "WHERE database_name = coalesce(?, current_database())", [name]).fetchone()
    return {"used_mb": round(row[0] * row[1] / 2**20, 1), "free_mb": round(row[0] * row[2] / 2**20, 1)}


def fill(db: Path, sizes: list[int], cases: int, seed: int, copy_plain: bool) -> dict[str, Any]:
    """Create the store through MetadataStore (migrations), then bulk-insert runs, nodes, cases and cache rows."""
    MetadataStore(db)
    con = duckdb.connect(str(db))
    rng = np.random.default_rng(seed)
    timings = {"nodes_s": 0.0, "evaluations_s": 0.0, "eval_cache_s": 0.0, "generate_s": 0.0}
    t0 = time.perf_counter()
    con.execute(f"INSERT INTO runs SELECT {RUN_ID_SQL}, 'softmax', 'kernelevolve/builtin_specs/softmax.py', "
                "sha256('spec' || run_idx), 'h200', 'mcts', 'offline', n, run_idx, 'completed', false, '{}', NULL, "
                "1.7e9 + run_idx * 3600, 1.7e9 + run_idx * 3600 + 1800 FROM "
                "(SELECT unnest(range(?)) AS run_idx, unnest(?::INTEGER[]) AS n)", [len(sizes), sizes])
    chunk_rows, start = 1_000_000, 0
    while start < len(sizes):
        end, rows = start, 0
        while end < len(sizes) and (rows == 0 or rows + sizes[end] <= chunk_rows):
            rows, end = rows + sizes[end], end + 1
        t = time.perf_counter()
        chunk = make_chunk(list(range(start, end)), sizes[start:end], rng)  # noqa: F841 (DuckDB scans it)
        con.execute("CREATE OR REPLACE TEMP TABLE g AS "  # NaN arrives from numpy as NULL
                    f"SELECT * REPLACE (coalesce(fit, 'nan'::DOUBLE) AS fit), {RUN_ID_SQL} AS run_id, "
                    f"{SQL_STATUS} AS status, sha256({RUN_ID_SQL} || ':' || node_id) AS hash FROM chunk")
        timings["generate_s"] += time.perf_counter() - t
        con.begin()
        for key, sql in FILL_SQL.items():
            t = time.perf_counter()
            con.execute(sql.format(cases=cases))
            timings[key] += time.perf_counter() - t
        con.commit()
        print(f"  filled runs {start}..{end - 1} ({sum(sizes[:end]):,} nodes)", flush=True)
        start = end
    t = time.perf_counter()
    con.execute("DROP TABLE g")
    con.execute("CHECKPOINT")
    timings["checkpoint_s"] = time.perf_counter() - t
    timings["total_s"] = time.perf_counter() - t0
    out: dict[str, Any] = {k: round(v, 2) for k, v in timings.items()}
    out["rows"] = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("nodes", "evaluations",
                                                                                      "eval_cache")}
    out["database_size"] = database_size(con)
    if copy_plain:  # how much of the file the (never read) indexes take: the same rows, no constraints
        con.execute(f"ATTACH '{db.with_name('plain.duckdb')}' AS plain")
        for table in ("runs", "nodes", "evaluations", "eval_cache"):
            con.execute(f"CREATE TABLE plain.{table} AS SELECT * FROM {table}")
        con.execute("CHECKPOINT plain")
        out["no_index_copy_mb"] = database_size(con, "plain")["used_mb"]
        con.execute("DETACH plain")
        db.with_name("plain.duckdb").unlink()
    con.close()
    return out


def check_uct_sql(store: MetadataStore, run_id: str) -> dict[str, Any]:
    """Assert that UCT_SQL gives tree_stats' children counts, visits and values on ``run_id``."""
    stats = tree_stats(StoreGraphView(store, run_id).nodes())
    rows = uct_sql(store, run_id)
    assert len(rows) == len(stats.visits), (len(rows), len(stats.visits))
    worst = 0.0
    for node_id, n_children, visits, value in rows:
        assert n_children == len(stats.children.get(node_id, ())), node_id
        assert visits == stats.visits[node_id], node_id
        worst = max(worst, abs(value - stats.value[node_id]) / max(abs(stats.value[node_id]), 1e-300))
        assert math.isclose(value, stats.value[node_id], rel_tol=1e-9), (node_id, value, stats.value[node_id])
    return {"run_nodes": len(rows) - 1, "rows_compared": len(rows), "max_rel_err_value": worst}


def uct_sql(store: MetadataStore, run_id: str) -> list[tuple]:
    """The candidate, through the store's own read session (attach, query, detach) like every store call."""
    with store._file.session(write=False) as conn:
        return conn.execute(UCT_SQL, {"run": run_id}).fetchall()


def resume_child(db: str, run_id: str) -> None:
    """What runner.SearchRunner does on resume before its first step, timed in this (fresh) process."""
    start = time.perf_counter()
    store = MetadataStore(db)
    marks = [("open_s", time.perf_counter())]
    for name, call in (("get_run_s", lambda: store.get_run(run_id)),
                       ("count_nodes_s", lambda: store.count_nodes(run_id)),
                       ("nodes_seen_s", lambda: {n.candidate_hash for n in store.nodes(run_id)}),
                       ("next_node_id_s", lambda: store.next_node_id(run_id))):
        call()
        marks.append((name, time.perf_counter()))
    out = {name: t - prev for (name, t), prev in zip(marks, [start] + [t for _, t in marks], strict=False)}
    print(json.dumps({**out, "total_s": marks[-1][1] - start}))


def insert_node(run_id: str, node_id: int, rng: np.random.Generator, cases: int,
                depths: dict[int, int]) -> tuple[Node, list[CaseRecord]]:
    """A node like the runner persists: a parent among earlier nodes, a status from the mix, its case rows."""
    u = float(rng.random())
    status = next(s for cut, s in STATUS_CUTS if u < cut)
    parent = None if node_id <= 3 else int(rng.integers(1, node_id))
    depths[node_id] = 1 if parent is None else depths[parent] + 1
    fit = float(rng.lognormal()) if status == "ok" else 0.0
    node = Node(run_id=run_id, node_id=node_id, parent_id=parent, depth=depths[node_id],
                candidate_hash=rng.bytes(32).hex(),
                status=status, fitness=fit, speedup_vs_eager=fit or None, path_ref=f"kernels/x{node_id}.py",
                operator_meta={"operator": "offline"}, tokens_in=3000, tokens_out=900, created_at=time.time())
    recs = [CaseRecord(run_id, node_id, f"case{c}", status, 0.1 if status == "ok" else None) for c in range(cases)]
    return node, recs


def measure(db: Path, sizes: list[int], probes: dict[str, int], args: argparse.Namespace) -> dict[str, Any]:
    """Every latency of the brief on one filled store; inserts last so that the reads see the filled store."""
    con = duckdb.connect(str(db), read_only=True)
    rid = {k: con.execute(f"SELECT {RUN_ID_SQL} FROM (SELECT ?::BIGINT AS run_idx)", [i]).fetchone()[0]
           for k, i in probes.items()}
    deep_id, deep_depth = con.execute("SELECT node_id, depth FROM nodes WHERE run_id = ? ORDER BY depth DESC, node_id "
                                      "LIMIT 1", [rid["big"]]).fetchone()
    hit = con.execute("SELECT candidate_hash, spec_hash FROM eval_cache LIMIT 1 OFFSET 1234").fetchone()
    con.close()
    store = MetadataStore(db)
    res: dict[str, Any] = {"runs": {k: {"run_id": rid[k], "nodes": sizes[i]} for k, i in probes.items()}}
    print("  best-K, ancestors, cache lookups", flush=True)
    res["best_k10"] = {k: timed(lambda r=rid[k]: store.best_nodes(r, k=10), args.reps)[0] for k in ("10k", "big")}
    res["ancestors"] = {"run": "big", "node_id": deep_id, "depth": deep_depth,
                        **timed(lambda: store.ancestors(rid["big"], deep_id), args.reps)[0]}
    res["cached_evaluation"] = {
        "hit": timed(lambda: store.cached_evaluation(hit[0], hit[1], TARGET, EVALUATOR_VERSION), args.reps)[0],
        "miss": timed(lambda: store.cached_evaluation("0" * 64, hit[1], TARGET, EVALUATOR_VERSION), args.reps)[0]}
    r100 = rid["100k"]
    view = StoreGraphView(store, r100)

    def step_reads() -> None:
        """A runner step's reads besides the policy's: Termination (count, best), next id, drafts, cache, progress."""
        view.count(), view.best(1), store.next_node_id(r100), view.children_counts()
        store.cached_evaluation(hit[0], hit[1], TARGET, EVALUATOR_VERSION), view.best(1), view.count()

    res["step_reads_100k_without_nodes"] = timed(step_reads, args.reps)[0]
    print("  UCT statistics", flush=True)
    res["uct_sql_check_10k"] = check_uct_sql(store, rid["10k"])
    res["uct_tree_stats"], res["uct_sql"] = {}, {}
    per_node_s = 0.0  # tree_stats end to end per node at the last size: predicts whether the next exceeds the cap
    for key in ("10k", "100k", "big"):
        n = sizes[probes[key]]
        if key == "big" and n == 100_000:
            continue
        reps = {"10k": args.reps, "100k": 3, "big": 2}[key]
        res["uct_sql"][key] = timed(lambda r=rid[key]: uct_sql(store, r), reps, args.skip_over_s)[0]
        if per_node_s * n > args.skip_over_s:
            res["uct_tree_stats"][key] = {"skipped": f"predicted {per_node_s * n:.0f} s per call"}
            continue
        v, fetch, compute = StoreGraphView(store, rid[key]), [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            nodes = v.nodes()
            t1 = time.perf_counter()
            tree_stats(nodes)
            fetch.append(t1 - t0)
            compute.append(time.perf_counter() - t1)
            del nodes
            if fetch[-1] + compute[-1] > args.skip_over_s:
                break
        total = [f + c for f, c in zip(fetch, compute, strict=True)]
        per_node_s = float(np.median(total)) / n
        res["uct_tree_stats"][key] = {"nodes_fetch": spread(fetch), "tree_stats_compute": spread(compute),
                                      "end_to_end": spread(total)}
    print("  resume", flush=True)
    walls, inner = [], []
    for _ in range(args.resume_reps):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "resume-child", str(db), r100], check=True,
                             capture_output=True, text=True).stdout
        walls.append(time.perf_counter() - t)
        inner.append(json.loads(out.strip().splitlines()[-1]))
    res["resume_100k"] = {"process_wall": spread(walls), "in_process_total": spread([i["total_s"] for i in inner]),
                          **{k: spread([i[k] for i in inner]) for k in inner[0] if k != "total_s"}}
    print("  inserts", flush=True)
    res["inserts"] = insert_rates(store, args)
    return res


def insert_rates(store: MetadataStore, args: argparse.Namespace) -> dict[str, Any]:
    """add_node one call per node (as the runner persists), then in store.batch() groups of 100; and cache writes."""
    run_id = "benchins"
    store.create_run(RunRecord(run_id=run_id, op="softmax", op_path="", spec_hash="s", hw=TARGET, strategy="mcts",
                               operator="offline", budget=10**6, seed=0))
    rng = np.random.default_rng(7)
    next_id, depths = iter(range(1, 10**9)), {}

    def add_one() -> None:
        store.add_node(*insert_node(run_id, next(next_id), rng, args.cases, depths))

    single, _ = timed(add_one, args.inserts, args.insert_budget_s)
    out: dict[str, Any] = {"single": {**single, "nodes_per_s_median": round(1 / single["median"], 1)}}

    def one_batch() -> None:
        with store.batch():
            for _ in range(args.batch_size):
                add_one()

    batch, _ = timed(one_batch, args.batches, args.insert_budget_s)
    out["batch"] = {"batch_size": args.batch_size, "per_batch": batch,
                    "nodes_per_s_median": round(args.batch_size / batch["median"], 1)}
    keys = iter(range(10**9))
    cache, _ = timed(lambda: store.cache_evaluation(f"new{next(keys)}", "s", TARGET, EVALUATOR_VERSION,
                                                    {"status": "ok", "fitness": 1.0}), args.reps, args.insert_budget_s)
    out["cache_evaluation_write"] = cache
    return out


def machine() -> dict[str, Any]:
    """What the numbers were taken on."""
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    mem = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal"))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "ram_gib": round(mem / 2**20, 1), "duckdb": duckdb.__version__,
            "python": platform.python_version(), "numpy": np.__version__, "date": dt.datetime.now().isoformat(
                timespec="seconds"), "git_commit": commit, "load_avg_at_start": os.getloadavg(),
            "command": "nice -n 10 python " + shlex.join(["benchmarks/store_scale.py", *sys.argv[1:]])}


def fmt(s: dict[str, Any], unit: float = 1e3) -> str:
    """'median [p10, p90]' in ms."""
    return f"{s['median'] * unit:.1f} [{s['p10'] * unit:.1f}, {s['p90'] * unit:.1f}]"


def write_md(path: Path, report: dict[str, Any]) -> None:
    """A short table per store size; the paragraph of interpretation is written by hand below it."""
    m = report["machine"]
    lines = ["# Metadata store at scale", "", f"{m['date']}, commit {m['git_commit']}: {m['cpu']}, {m['cores']} cores, "
             f"{m['ram_gib']} GiB RAM, DuckDB {m['duckdb']}, Python {m['python']}.", f"Command: `{m['command']}`", "",
             "Latencies in ms as median [p10, p90] over the repetitions in the JSON (`n`).", "",
             "| measure | " + " | ".join(f"N = {int(n):,}" for n in report["sizes"]) + " |",
             "|---|" + "---|" * len(report["sizes"])]
    rows: dict[str, list[str]] = {}
    for col, r in enumerate(report["sizes"].values()):
        big = r["runs"]["big"]["nodes"]
        cells = {"fill (setup), s": f"{r['fill']['total_s']:.0f}", "file size, MiB": f"{r['file_mb']:.0f}",
                 "same rows without indexes, MiB": f"{r['fill'].get('no_index_copy_mb', float('nan')):.0f}",
                 "add_node, one per call": fmt(r["inserts"]["single"]),
                 "add_node, nodes/s (median)": f"{r['inserts']['single']['nodes_per_s_median']:.1f}",
                 "batch of 100 add_node": fmt(r["inserts"]["batch"]["per_batch"]),
                 "batch, nodes/s (median)": f"{r['inserts']['batch']['nodes_per_s_median']:.0f}",
                 "cache_evaluation write": fmt(r["inserts"]["cache_evaluation_write"]),
                 "best_nodes k=10, 10k run": fmt(r["best_k10"]["10k"]),
                 "best_nodes k=10, big run": fmt(r["best_k10"]["big"]) + f" ({big:,})",
                 "ancestors, deepest node of big run": fmt(r["ancestors"]) + f" (depth {r['ancestors']['depth']})",
                 "cached_evaluation hit": fmt(r["cached_evaluation"]["hit"]),
                 "runner step reads w/o nodes(), 100k run": fmt(r["step_reads_100k_without_nodes"]),
                 "resume 100k run, fresh process wall": fmt(r["resume_100k"]["process_wall"]),
                 "resume 100k run, store calls": fmt(r["resume_100k"]["in_process_total"])}
        for key, t in r["uct_tree_stats"].items():
            n = r["runs"][key]["nodes"]
            if "skipped" in t:
                cells[f"tree_stats(nodes()), {n:,}-node run"] = "skipped: " + t["skipped"]
                continue
            cells[f"tree_stats(nodes()), {n:,}-node run"] = fmt(t["end_to_end"])
            cells[f"  of which nodes() / tree_stats, {n:,}"] = (f"{t['nodes_fetch']['median'] * 1e3:.0f} / "
                                                               f"{t['tree_stats_compute']['median'] * 1e3:.0f}")
        for key, t in r["uct_sql"].items():
            cells[f"UCT SQL aggregate, {r['runs'][key]['nodes']:,}-node run"] = fmt(t)
        for k, v in cells.items():
            rows.setdefault(k, ["n/a"] * len(report["sizes"]))[col] = v
    lines += [f"| {k} | " + " | ".join(v) + " |" for k, v in rows.items()]
    lines += ["", "## What this means", "", "(written by hand after the run)", ""]
    path.write_text("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd")
    child = sub.add_parser("resume-child", help="internal: one timed resume in a fresh process")
    child.add_argument("db")
    child.add_argument("run_id")
    for flag, kind, default, text in [
        ("--run-size", int, 10_000, "nodes of the many small runs"), ("--cases", int, 3, "evaluation rows per node"),
        ("--reps", int, 20, "repetitions of a fast read"), ("--resume-reps", int, 5, "fresh processes resuming"),
        ("--inserts", int, 500, "single add_node calls"), ("--batches", int, 10, "store.batch() groups"),
        ("--batch-size", int, 100, "add_node calls per batch"), ("--seed", int, 0, "of the synthetic store"),
        ("--insert-budget-s", float, 150.0, "stop an insert series after this long"),
        ("--skip-over-s", float, 60.0, "skip tree_stats where one call would take longer"),
        ("--tmp", str, "/tmp", "where the database files go (deleted at the end)")]:
        ap.add_argument(flag, type=kind, default=default, help=text)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000], help="total nodes N")
    ap.add_argument("--no-plain-copy", action="store_true", help="skip measuring the size without indexes")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "store_scale")
    args = ap.parse_args()
    if args.cmd == "resume-child":
        resume_child(args.db, args.run_id)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"machine": machine(), "sizes": {}}
    for n in args.sizes:
        tmp = Path(tempfile.mkdtemp(prefix="store_scale_", dir=args.tmp))
        try:
            db = tmp / "store.duckdb"
            sizes, probes = layout(n, args.run_size)
            print(f"N = {n:,}: {len(sizes)} runs; filling {db}", flush=True)
            filled = fill(db, sizes, args.cases, args.seed, not args.no_plain_copy)
            entry = {"runs_in_store": len(sizes), "fill": filled, "file_mb": round(db.stat().st_size / 2**20, 1),
                     "load_avg_at_start": os.getloadavg()}
            print(f"  fill {filled['total_s']:.0f} s, {entry['file_mb']:.0f} MiB", flush=True)
            entry.update(measure(db, sizes, probes, args))
            entry["file_mb_after_inserts"] = round(db.stat().st_size / 2**20, 1)
            with duckdb.connect(str(db), read_only=True) as con:
                entry["database_size_after_inserts"] = database_size(con)
            entry["load_avg_at_end"] = os.getloadavg()
            report["sizes"][str(n)] = entry
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        (args.out / "store_scale.json").write_text(json.dumps(report, indent=1) + "\n")
        write_md(args.out / "store_scale.md", report)


if __name__ == "__main__":
    main()
