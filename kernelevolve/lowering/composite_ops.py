"""One collection of torch's composite ops per registry state, instead of two per ``run_decompositions``.

Why: ``ExportedProgram.run_decompositions`` asks ``torch._export.utils._collect_all_valid_cia_ops`` twice per
call for every functional CompositeImplicitAutograd op of every namespace, and that walk asks the C++
dispatcher for its whole CIA registry once per namespace (~0.2 s a call with this process's ~30 namespaces).
Lowering an ATen op traces it once per input structure, so the walk was about 40% of the lowering's time.
Torch leaves it uncached because a later registration can add a CIA op; the cache here is keyed on exactly
that: the registry's CIA entries and the namespaces ``torch.ops`` knows. A new op or namespace is a new key.
Where torch's private names differ (another torch version), nothing is patched and behaviour is torch's own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import torch

_LOCK = threading.Lock()
_COLLECTED: dict[tuple, frozenset] = {}
_PATCHED = False


def _registry_key() -> tuple:
    """What the collected set depends on: the dispatcher's CIA registrations and the known namespaces."""
    registrations = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
    return hash(tuple(registrations)), len(registrations), tuple(sorted(torch.ops._dir))


def _cached(collect: Callable[[], set]) -> Callable[[], frozenset]:
    def collect_once() -> frozenset:
        key = _registry_key()
        with _LOCK:
            found = _COLLECTED.get(key)
            if found is None:
                found = frozenset(collect())
                # the walk itself may name new namespaces (it materialises ops): key what it leaves
                _COLLECTED[key] = _COLLECTED[_registry_key()] = found
        return found

    return collect_once


def install() -> None:
    """Route torch.export's two callers of the walk through one cache (idempotent, process-wide)."""
    global _PATCHED
    if _PATCHED:
        return
    with _LOCK:
        if _PATCHED:
            return
        try:
            import torch._export.utils as export_utils
            import torch.export.decomp_utils as decomp_utils
            import torch.export.exported_program as exported_program
        except ImportError:
            _PATCHED = True
            return
        original = getattr(export_utils, "_collect_all_valid_cia_ops", None)  # torch's own, unpatched
        name = "_collect_all_valid_cia_ops"
        users = [m for m in (exported_program, decomp_utils) if getattr(m, name, None) is original]
        if original is not None and users:
            cached = _cached(original)
            for module in users:
                setattr(module, name, cached)
        _PATCHED = True
