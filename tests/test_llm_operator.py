"""``--operator anthropic`` end to end: the official SDK against a loopback server speaking the Messages API.

The server is a scripted test double (tests/fake_llm_server.py), not a model. What is tested is the
operator: the prompt it builds (the parent's code and evaluation, knowledge chosen for the parent's
bottleneck), the agentic tool loop, the fenced-block fallback, token accounting and failure handling.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fake_llm_server import FakeMessagesServer

from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore

SWISH = (Path(__file__).resolve().parent.parent / "knowledge_base" / "code_samples" / "swish.py").read_text()
BLOCKS = [1024, 2048, 512, 4096, 256, 128, 8192, 64]


def candidate(n: int) -> str:
    return SWISH.replace("BLOCK_SIZE = 1024", f"BLOCK_SIZE = {BLOCKS[n % len(BLOCKS)]}")


def llm_env(server: FakeMessagesServer) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key-not-real", "KE_LLM_MAX_RETRIES": "1"}


def user_prompts(server: FakeMessagesServer) -> list[str]:
    """The first user message of every conversation the operator started."""
    prompts = []
    for req in server.requests:
        messages = req["body"].get("messages", [])
        if len(messages) == 1:
            prompts.append(messages[0]["content"])
    return prompts


@pytest.mark.slow
def test_agentic_search_on_a_simulated_target(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    code_root = tmp_path / "team_kernels"  # a configured code root the model's grep tool searches
    (code_root / "ops").mkdir(parents=True)
    (code_root / "ops" / "swish_notes.py").write_text("# ke_code_root_marker: our swish runs BLOCK_SIZE 2048\n")
    with FakeMessagesServer("agent", candidate) as server:
        result = ke("search", "--op", "swish", "--hw", "mtia-v3", "--operator", "anthropic", "--budget", "3",
                    "--drafts", "1", "--no-reuse", "--json", "--state-dir", str(state), "--code-root",
                    str(code_root), env=llm_env(server))
    assert result.returncode == 0, result.stderr
    summary = result.json()
    assert summary["status"] == "completed" and summary["nodes"] == 3
    meta = MetadataStore(state / "ke.duckdb")
    nodes = meta.nodes(summary["run_id"])
    assert all(n.status == "ok" for n in nodes), [(n.status, n.reason) for n in nodes]
    assert all(n.tokens_in > 1000 and n.tokens_out > 100 for n in nodes), "every node carries its token counts"
    assert all(n.operator_meta["reply"] == "tools" for n in nodes)
    assert {"kb_search", "grep", "write_file", "lint"} <= set(nodes[-1].operator_meta["tools_used"])

    prompts = user_prompts(server)
    assert len(prompts) == 3
    draft = prompts[0]  # the draft starts from the offline lowering of the reference ("make it faster")
    assert "Here is a correct kernel" in draft and "Template lowering of swish" in draft
    expand = prompts[-1]  # an expansion of a correct, simulated (so roofline-classified) parent
    parent = meta.get_node(summary["run_id"], nodes[-1].parent_id)
    parent_source = ObjectStore(str(state / "artifacts")).get_text(parent.path_ref)
    assert parent_source.strip() in expand, "the prompt must carry the parent's code"
    assert f"Parent node {parent.node_id}: evaluation" in expand and "fitness:" in expand
    assert "bottleneck:" in expand, "the parent's evaluation (with its roofline bottleneck) is in the prompt"
    state_line = [line for line in expand.splitlines() if line.startswith("# Knowledge base excerpts")]
    assert state_line and " for " in state_line[0], "knowledge was retrieved for the parent's bottleneck"
    assert "(hardware/mtia/" in expand or "(guidance/" in expand, "excerpts name the documents they come from"
    tools_seen = [t["name"] for t in server.requests[0]["body"]["tools"]]
    assert tools_seen == ["read_file", "write_file", "replace_in_file", "lint", "grep", "kb_search"]

    objects = ObjectStore(str(state / "artifacts"))
    prefix = ObjectStore.node_prefix(summary["run_id"], nodes[-1].node_id)
    transcript = json.loads(objects.get_text(prefix + "prompt.json"))
    assert transcript["messages"][0]["content"] == expand
    tool_replies = [block["content"] for m in transcript["messages"] if m["role"] == "user" and isinstance(
        m["content"], list) for block in m["content"] if block.get("type") == "tool_result"]
    assert "ops/swish_notes.py:1" in tool_replies[1] and "BLOCK_SIZE 2048" in tool_replies[1], "grep saw the root"
    lint_reply = tool_replies[-1]
    assert "static checks passed" in lint_reply and "runs correctly on the CPU interpreter" in lint_reply
    assert "Analysis (operator)" in objects.get_text(prefix + "overview.md")


def test_plain_text_reply_with_one_fenced_block(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with FakeMessagesServer("plain", candidate) as server:
        result = ke("search", "--op", "swish", "--hw", "cpu", "--operator", "anthropic", "--budget", "2",
                    "--drafts", "1", "--no-reuse", "--json", "--state-dir", str(state), env=llm_env(server))
    assert result.returncode == 0, result.stderr
    nodes = MetadataStore(state / "ke.duckdb").nodes(result.json()["run_id"])
    assert len(nodes) == 2 and all(n.status == "ok" for n in nodes), [(n.status, n.reason) for n in nodes]
    assert all(n.operator_meta["reply"] == "fenced block" for n in nodes)
    assert len({n.candidate_hash for n in nodes}) == 2


def test_api_that_keeps_failing_stops_the_run_cleanly(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with FakeMessagesServer("fail", candidate) as server:
        result = ke("search", "--op", "swish", "--hw", "cpu", "--operator", "anthropic", "--budget", "2",
                    "--no-reuse", "--state-dir", str(state), env=llm_env(server))
        assert len(server.requests) >= 5, "each expansion is retried by the SDK and then by the orchestrator"
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "failed 5 times in a row" in result.stderr and "InternalServerError" in result.stderr
    runs = MetadataStore(state / "ke.duckdb").list_runs()
    assert runs[0].status == "failed", "a failed run stays in the store, resumable"


def test_missing_api_key_is_bad_input(ke, tmp_path: Path) -> None:
    result = ke("search", "--op", "swish", "--hw", "cpu", "--operator", "anthropic", "--state-dir",
                str(tmp_path / "s"), env={"ANTHROPIC_API_KEY": ""})
    assert result.returncode == 2 and "ANTHROPIC_API_KEY" in result.stderr
    assert not (tmp_path / "s").exists()


def test_max_cost_stops_the_run_cleanly(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with FakeMessagesServer("agent", candidate) as server:
        result = ke("search", "--op", "swish", "--hw", "cpu", "--operator", "anthropic", "--model",
                    "claude-sonnet-4-5", "--max-cost", "0.03", "--budget", "6", "--no-reuse", "--json",
                    "--state-dir", str(state), env=llm_env(server))
    assert result.returncode == 0, result.stderr
    nodes = MetadataStore(state / "ke.duckdb").nodes(result.json()["run_id"])
    costs = [n.cost_usd for n in nodes]
    assert all(c > 0 for c in costs), "the model's price turns token counts into cost"
    assert sum(costs[:-1]) < 0.03 <= sum(costs), "the run stops at the first node that reaches the cap"
    assert len(nodes) < 6


def test_openai_compatible_endpoint(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with FakeMessagesServer("plain", candidate) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "test-key-not-real"}
        result = ke("search", "--op", "swish", "--hw", "cpu", "--operator", "openai", "--model", "local-model",
                    "--budget", "2", "--drafts", "1", "--no-reuse", "--json", "--state-dir", str(state), env=env)
        assert server.requests and server.requests[0]["path"] == "/v1/chat/completions"
        assert server.requests[0]["body"]["model"] == "local-model"
        assert server.requests[0]["body"]["tools"][0]["type"] == "function"
    assert result.returncode == 0, result.stderr
    nodes = MetadataStore(state / "ke.duckdb").nodes(result.json()["run_id"])
    assert [n.status for n in nodes] == ["ok", "ok"] and all(n.tokens_in > 2000 for n in nodes)
