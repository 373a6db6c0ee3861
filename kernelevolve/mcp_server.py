"""``ke mcp``: the platform as MCP tools over stdio, on the official ``mcp`` SDK (docs/architecture.md §8).

Other agents get what KernelEvolve's own operator uses: knowledge-base search and read, queries over runs
and nodes in the store, and sandboxed evaluation of a candidate on a target. Every tool returns plain JSON
text; errors come back as tool errors with one line, and the server keeps serving.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def one_line_errors(fn: Callable[..., str]) -> Callable[..., str]:
    """A failing tool answers with a one-line tool error (bad run id, unknown op, ...), never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported to the client, the server keeps serving
            text = " ".join(str(exc.args[0] if exc.args else exc).split()) or type(exc).__name__
            raise ToolError(f"{fn.__name__}: {text}") from None

    return wrapper


def build_server(state_dir: str | None, store_url: str | None, kb_dir: str | None) -> MCPServer:
    from kernelevolve.knowledge.samples import kb_root
    from kernelevolve.state import resolve_state

    server = MCPServer("kernelevolve", instructions="Search the Triton kernel knowledge base, inspect "
                       "KernelEvolve runs, and evaluate candidate kernels on a hardware target.")
    root = Path(kb_dir) if kb_dir else kb_root()
    paths = resolve_state(state_dir, store_url)

    def stores():
        from kernelevolve.store.metadata import MetadataStore
        from kernelevolve.store.objects import ObjectStore

        if not paths.db_path.exists():
            raise ValueError(f"no KernelEvolve state in {paths.root}")
        return MetadataStore(paths.db_path), ObjectStore(paths.store_url)

    @server.tool(description="Deep search of the knowledge base: passages ranked for the query, restricted to "
                 "documents for the target, bottleneck and phase when given.")
    @one_line_errors
    def kb_search(query: str, hw: str | None = None, bottleneck: str | None = None, phase: str | None = None,
                  k: int = 5) -> str:
        from kernelevolve.knowledge.documents import known_targets, load_documents
        from kernelevolve.knowledge.search import follow_code, rank, select

        docs, _ = load_documents(root)
        vendor = known_targets().get(hw) if hw else None
        passages = rank(select(docs, hw, vendor, bottleneck, phase), query, k)
        passages += follow_code(passages, docs, query)
        return json.dumps([p.__dict__ for p in passages], indent=1)

    @server.tool(description="Read a knowledge-base document by its path relative to the knowledge base.")
    @one_line_errors
    def kb_read(path: str) -> str:
        target = (root / path).resolve()
        if root.resolve() not in target.parents or not target.is_file():
            raise ValueError(f"no knowledge-base document {path!r}")
        return target.read_text(encoding="utf-8")

    @server.tool(description="List runs in the store, newest first, with node counts.")
    @one_line_errors
    def list_runs() -> str:
        meta, _ = stores()
        counts = meta.run_node_counts()
        return json.dumps([{"run_id": r.run_id, "op": r.op, "hw": r.hw, "strategy": r.strategy, "status": r.status,
                            "nodes": counts.get(r.run_id, 0), "best_node_id": r.best_node_id}
                           for r in meta.list_runs()], indent=1)

    @server.tool(description="A run's nodes (id, parent, status, fitness, reason), or one node with its source.")
    @one_line_errors
    def get_nodes(run_id: str, node_id: int | None = None) -> str:
        meta, objects = stores()
        run_id = meta.resolve_run_id(run_id)
        if node_id is None:
            return json.dumps([{"node_id": n.node_id, "parent_id": n.parent_id, "status": n.status,
                                "fitness": n.fitness, "reason": n.reason} for n in meta.nodes(run_id)], indent=1)
        node = meta.get_node(run_id, node_id)
        if node is None:
            raise ValueError(f"run {run_id} has no node {node_id}")
        return json.dumps({**node.__dict__, "source": objects.get_text(node.path_ref)}, indent=1, default=str)

    @server.tool(description="Evaluate a candidate (full Python source) for a built-in op or spec path on a "
                 "target, in the sandbox: correctness, anti-cheat checks, and timing or simulation.")
    @one_line_errors
    def evaluate(op: str, hw: str, source: str, simulate: bool = False, timeout_s: float = 120.0) -> str:
        return json.dumps(_evaluate(op, hw, source, simulate, timeout_s), indent=1)

    return server


def _evaluate(op: str, hw: str, source: str, simulate: bool, timeout_s: float) -> dict[str, Any]:
    """``ke eval``'s checks and evaluator (``kernelevolve.api.evaluate``), in a scratch folder of its own: a
    tool call never writes to the state directory."""
    from kernelevolve.api import evaluate

    with tempfile.TemporaryDirectory(prefix="ke-mcp-") as tmp:
        return evaluate(op, hw, source=source, simulate=simulate, timeout_s=timeout_s,
                        scratch=Path(tmp) / "scratch").result.to_dict()
