"""Options every command takes, and the helpers that open the stores from them."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from kernelevolve.errors import UserError
from kernelevolve.logging_setup import configure_logging
from kernelevolve.state import StatePaths, ensure_writable, resolve_state

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


_reachable: set[str] = set()  # store URLs already probed by this process


def checked_state(state_dir: str | None, store_url: str | None) -> StatePaths:
    """The state paths with every argument checked (``kernelevolve.inputs``) and an S3 store's endpoint
    probed with short timeouts: what every command with ``state_options`` calls first, so a typo or an
    unreachable store is refused (exit 2) before anything is written or any slow work starts."""
    from kernelevolve.store.objects import ObjectStore, StoreError

    paths = resolve_state(state_dir, store_url)
    if paths.store_url not in _reachable:
        try:
            ObjectStore(paths.store_url).check_reachable()
        except StoreError as exc:
            raise UserError(str(exc)) from None
        _reachable.add(paths.store_url)
    return paths


def load_op(op: str):
    """The spec ``--op`` names (a built-in or a file): its path checked first, cheaply, so that bad input is
    refused before torch is imported; then loaded. Either failure is bad input (exit 2)."""
    from kernelevolve.builtin_specs import resolve_op

    try:
        path = resolve_op(op)
    except FileNotFoundError as exc:
        raise UserError(str(exc)) from None
    from evaluators.spec import SpecError, load_spec

    try:
        return load_spec(path)
    except SpecError as exc:
        raise UserError(str(exc)) from None


def open_state(state_dir: str | None, store_url: str | None, create: bool):
    """(paths, metadata store, object store). ``create=False`` refuses to invent an empty store; with
    ``create`` the artifact store is proved writable before the DuckDB file is created."""
    from kernelevolve.store.metadata import MetadataStore, StoreError
    from kernelevolve.store.objects import ObjectStore
    from kernelevolve.store.objects import StoreError as ObjectStoreError

    paths = checked_state(state_dir, store_url)
    if create:
        ensure_writable(paths.root)
    elif not paths.db_path.exists():
        raise UserError(f"no KernelEvolve state in {paths.root} (run 'ke search' first, or pass --state-dir)")
    objects = ObjectStore(paths.store_url)
    if create:
        try:
            objects.check_writable()
        except ObjectStoreError as exc:
            raise UserError(str(exc)) from None
    configure_logging(paths.log_path if create or paths.root.exists() else None)
    try:
        meta = MetadataStore(paths.db_path)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    return paths, meta, objects


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def resolve_run(meta, run_id: str) -> str:
    """An exact run id or a unique prefix; a miss or an ambiguous prefix is bad input (exit 2)."""
    try:
        return meta.resolve_run_id(run_id)
    except LookupError as exc:
        raise UserError(exc.args[0]) from None
