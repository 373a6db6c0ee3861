"""``ke mcp``: serve KernelEvolve's tools over MCP (stdio)."""

from __future__ import annotations

import click

from kernelevolve.cli.common import knowledge_root, state_options


@click.command("mcp")
@click.option("--kb-dir", default=None, help="Knowledge-base root (default: the shipped one).")
@state_options
def mcp_cmd(kb_dir, state_dir, store_url) -> None:
    """Serve knowledge-base search/read, run and node queries, and candidate evaluation as MCP tools (stdio)."""
    from kernelevolve.api.stores import checked_state

    knowledge_root(kb_dir)  # before serving: a bad folder or store is refused now, not at the first tool call
    checked_state(state_dir, store_url)
    from kernelevolve.mcp_server import build_server

    build_server(state_dir, store_url, kb_dir).run("stdio")
