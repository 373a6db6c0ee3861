"""``ke mcp`` through the official MCP client over stdio: list the tools and call each one."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

SWISH = Path(REPO_ROOT) / "knowledge_base" / "code_samples" / "swish.py"


async def _session_calls(state: Path) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kernelevolve.cli.main", "mcp", "--state-dir", str(state)],
        env={**os.environ, "PYTHONPATH": REPO_ROOT, "KE_EXECUTOR": "local"})
    out: dict = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)

        async def call(name: str, args: dict):
            result = await session.call_tool(name, args)
            return result.is_error, result.content[0].text

        out["kb_search"] = await call("kb_search", {"query": "online softmax running max", "k": 3})
        out["kb_read"] = await call("kb_read", {"path": "code_samples/swish.py"})
        out["kb_read_escape"] = await call("kb_read", {"path": "../../pyproject.toml"})
        out["list_runs"] = await call("list_runs", {})
        run_id = json.loads(out["list_runs"][1])[0]["run_id"]
        out["get_nodes"] = await call("get_nodes", {"run_id": run_id})
        out["get_node"] = await call("get_nodes", {"run_id": run_id, "node_id": 1})
        out["get_nodes_bad"] = await call("get_nodes", {"run_id": "zzzz"})
        out["evaluate"] = await call("evaluate", {"op": "swish", "hw": "cpu", "source": SWISH.read_text()})
        out["evaluate_bad_op"] = await call("evaluate", {"op": "nope", "hw": "cpu", "source": "x = 1"})
    return out


@pytest.mark.slow
def test_every_tool_over_stdio(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    made = ke("search", "--op", "swish", "--hw", "cpu", "--budget", "2", "--json", "--state-dir", str(state))
    assert made.returncode == 0, made.stderr
    out = asyncio.run(_session_calls(state))
    assert out["tools"] == ["evaluate", "get_nodes", "kb_read", "kb_search", "list_runs"]
    error, text = out["kb_search"]
    assert not error and json.loads(text)[0]["path"] == "code_samples/softmax_looped.py"
    assert out["kb_read"] == (False, SWISH.read_text())
    error, text = out["kb_read_escape"]
    assert error and "no knowledge-base document" in text
    error, text = out["list_runs"]
    assert not error and json.loads(text)[0]["nodes"] == 2
    assert len(json.loads(out["get_nodes"][1])) == 2
    node = json.loads(out["get_node"][1])
    assert node["node_id"] == 1 and "TritonModel" in node["source"]
    error, text = out["get_nodes_bad"]
    assert error and "no run matches 'zzzz'" in text
    error, text = out["evaluate"]
    assert not error and json.loads(text)["status"] == "ok"
    error, text = out["evaluate_bad_op"]
    assert error and "unknown op 'nope'" in text
