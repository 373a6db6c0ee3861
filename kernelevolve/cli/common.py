"""Options every command takes, and the helpers every command shares for printing (opening the stores from
the options is ``kernelevolve.api.stores``: scripts and the MCP server need it too)."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kernelevolve.errors import UserError

_STORE_URL_HELP = "Artifact store: a folder or s3://bucket/prefix (env KE_STORE_URL; default <state-dir>/artifacts)."
_STATE_DIR_HELP = "State directory (env KE_STATE_DIR; default .kernelevolve)."


def global_state_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--state-dir``/``--store-url`` on ``ke`` itself (``ke --state-dir X best RUN``): users put them
    before the command as often as after it. Kept on the root context for :func:`state_options` to merge."""

    @functools.wraps(fn)
    def wrapper(*args: Any, state_dir: str | None = None, store_url: str | None = None, **kwargs: Any) -> Any:
        click.get_current_context().obj = {"state_dir": state_dir, "store_url": store_url}
        return fn(*args, **kwargs)

    wrapper = click.option("--store-url", default=None, help=_STORE_URL_HELP)(wrapper)
    return click.option("--state-dir", default=None, help=_STATE_DIR_HELP)(wrapper)


def _merged(name: str, value: str | None) -> str | None:
    """The option's value after the command, else before it (else None: the env var's turn, in
    ``resolve_state``). Given in both places with different values is bad input: which one was meant?"""
    root = click.get_current_context().find_root()
    outer = (root.obj or {}).get(name) if isinstance(root.obj, dict) else None
    if value is None or outer is None:
        return value if value is not None else outer
    if _same_place(value, outer):
        return value
    flag = "--" + name.replace("_", "-")
    raise UserError(f"{flag} given twice with different values: '{outer}' before the command and '{value}' "
                    "after it; give it once")


def _same_place(a: str, b: str) -> bool:
    if "://" in a or "://" in b:
        return a.rstrip("/") == b.rstrip("/")
    return os.path.abspath(os.path.expanduser(a)) == os.path.abspath(os.path.expanduser(b))


def state_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--state-dir``/``--store-url`` after the command, merged with the same options given before it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, state_dir: str | None = None, store_url: str | None = None, **kwargs: Any) -> Any:
        return fn(*args, state_dir=_merged("state_dir", state_dir), store_url=_merged("store_url", store_url),
                  **kwargs)

    wrapper = click.option("--store-url", default=None, help=_STORE_URL_HELP)(wrapper)
    return click.option("--state-dir", default=None, help=_STATE_DIR_HELP)(wrapper)


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")(fn)


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def shrunk_line(shrunk: dict) -> str:
    """How ``ke search`` and ``ke eval`` say that a spec's production sizes were scaled down for the interpreter."""
    sizes = ", ".join(f"{name} {old}->{new}" for name, (old, new) in shrunk.items())
    return f"  test inputs shrunk from the production sizes: {sizes}"


def knowledge_root(kb_dir: str | None) -> Path:
    """The knowledge-base folder from --kb-dir, else KE_KB_DIR, else the shipped one; checked (exit 2)."""
    from kernelevolve.inputs import directory
    from kernelevolve.knowledge.samples import kb_root

    if kb_dir:
        return directory(kb_dir, "knowledge base", "--kb-dir")
    return directory(kb_root(), "knowledge base", "KE_KB_DIR" if os.environ.get("KE_KB_DIR") else None)
