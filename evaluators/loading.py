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
    """A file could not be imported; ``kind`` is ``source`` (not Python text), ``syntax`` or ``import``."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def decode_source(data: bytes) -> str:
    """The text of a Python source file, or a one-line ``LoadError`` for what cannot be one: an empty file,
    bytes that are not UTF-8 (a binary file, another encoding) or NUL bytes. Checked up front so a binary
    file is reported as such, not as a decoding crash or a puzzling syntax error."""
    if not data.strip():
        raise LoadError("is empty: expected Python source", "source")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(f"is not UTF-8 Python source (byte 0x{data[exc.start]:02x} at offset {exc.start}; "
                        "a binary file?)", "source") from None
    nul = text.find("\0")
    if nul >= 0:
        raise LoadError(f"is not Python source: NUL byte at offset {nul} (a binary file?)", "source")
    return text


def read_source(path: Path) -> str:
    """``decode_source`` of a file's bytes; the message starts with the file's name."""
    try:
        return decode_source(path.read_bytes())
    except LoadError as exc:
        raise LoadError(f"{path.name} {exc}", exc.kind) from None


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
