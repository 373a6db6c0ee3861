"""Loading untrusted Python files (specs and candidates) as modules, with one-line errors.

Triton's ``@jit`` reads kernel source through ``inspect``, so modules must come from real files on disk,
never from ``exec`` of a string.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

_counter = itertools.count()


class LoadError(Exception):
    """A file could not be imported; ``kind`` is ``syntax`` or ``import``."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def load_module(path: Path, prefix: str) -> ModuleType:
    """Import ``path`` under a fresh module name so two files with one stem never collide."""
    name = f"_ke_{prefix}_{path.stem}_{next(_counter)}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise LoadError(f"{path} is not a Python file", "import")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise LoadError(f"{path.name} has a syntax error at line {exc.lineno}: {exc.msg}", "syntax") from None
    except Exception as exc:  # untrusted code: any failure at import is the file's fault
        sys.modules.pop(name, None)
        raise LoadError(f"{path.name} failed to import: {type(exc).__name__}: {exc}", "import") from None
    return module
