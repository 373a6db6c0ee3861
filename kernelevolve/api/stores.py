"""Opening the state from plain arguments: every api function checks its state directory and store first, so a
typo or an unreachable store is refused (``UserError``, exit 2 in the CLI) before anything is written."""

from __future__ import annotations

from kernelevolve.errors import UserError
from kernelevolve.logging_setup import configure_logging
from kernelevolve.state import StatePaths, ensure_writable, resolve_state

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


def resolve_run(meta, run_id: str) -> str:
    """An exact run id or a unique prefix; a miss or an ambiguous prefix is bad input (exit 2)."""
    try:
        return meta.resolve_run_id(run_id)
    except LookupError as exc:
        raise UserError(exc.args[0]) from None
