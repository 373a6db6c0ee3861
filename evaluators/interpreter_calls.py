"""Cheaper ``@triton.jit`` helper calls under Triton's CPU interpreter.

Each time a kernel calls a jitted helper, the interpreter re-patches ``triton.language`` for it
(``InterpretedFunction.__call__`` -> ``_patch_lang``): it walks the helper's module globals and rewraps every
builtin, hundreds of ``setattr`` calls, and never restores them (the kernel's own patch scope does that when
the launch ends). Inside a launch the modules are already patched, so for a helper that sees no language
module the kernel does not, the second patch changes nothing. Generated drafts call small helpers per tile
(``_cast_out``, the padded loads, epilogues), which made the re-patching 12-22% of an interpreted forward.

``install()`` skips exactly that redundant patch, and nothing else: outside a launch, or the first time in a
launch that a helper sees a language module the launch has not patched yet (Triton's own reduction helpers
import ``triton.language.core``), the interpreter patches as before. If Triton's internals are not the ones
this was written against, it leaves them alone.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

_STATE = threading.local()  # .langs: ids of the language modules the running launch patched, or None


_LANGS: dict[tuple[int, int], frozenset[int]] = {}  # (id of a module's globals, their count) -> its languages


def _langs(fn: Any) -> frozenset[int]:
    """Ids of the language modules (``triton.language``, its ``core``) that ``fn``'s module sees."""
    import triton.language as tl

    names = getattr(fn, "__globals__", {})
    key = (id(names), len(names))
    if key not in _LANGS:
        wanted = (tl, tl.core)
        _LANGS[key] = frozenset(id(v) for v in names.values() if inspect.ismodule(v) and any(v is w for w in wanted))
    return _LANGS[key]


def install() -> bool:
    """Patch the interpreter once per process; True if it was (or already is) installed."""
    try:
        from triton.runtime import interpreter
    except ImportError:
        return False
    executor, function = getattr(interpreter, "GridExecutor", None), getattr(interpreter, "InterpretedFunction", None)
    if executor is None or function is None or not hasattr(interpreter, "_patch_lang"):
        return False
    if getattr(function.__call__, "_ke_skips_repatch", False):
        return True
    launch, call = executor.__call__, function.__call__
    if not (hasattr(executor, "__init__") and "fn" in inspect.signature(executor.__init__).parameters):
        return False

    def launch_once_patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        outer = getattr(_STATE, "langs", None)
        _STATE.langs = _langs(self.fn)
        try:
            return launch(self, *args, **kwargs)
        finally:
            _STATE.langs = outer

    def helper_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        active, needed = getattr(_STATE, "langs", None), _langs(self.fn)
        if active is None:
            return call(self, *args, **kwargs)
        if not needed <= active:  # patched now, and left patched at least until the launch ends
            _STATE.langs = active | needed
            return call(self, *args, **kwargs)
        fn = self.rewrite()
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # the interpreter's own wrapping, as in the call it replaces
            raise interpreter.InterpreterError(repr(e)) from e

    helper_call._ke_skips_repatch = True  # type: ignore[attr-defined]
    executor.__call__ = launch_once_patched
    function.__call__ = helper_call
    return True
