"""Checks for every path and URL a command is given, made where arguments become paths and URLs.

Each check either returns the usable path/URL or raises ``InputError`` (a ``UserError``: one line, exit 2)
naming the argument, where it came from (``--flag`` or an environment variable) and what is wrong. They
run before anything is written, so bad input never leaves a half-made state directory, run or artifact.

What counts as a URL: anything matching ``^[A-Za-z][A-Za-z0-9+.-]*:/`` (a scheme, a colon, a slash).
Everything else is a local path. So ``s3:/bucket`` and ``s4://bucket`` are URLs (refused, not taken as
folders named ``s3:``/``s4:``), while ``runs/a:b`` stays a local path.
"""

from __future__ import annotations

import importlib.util
import os
import re
import stat
from pathlib import Path

from evaluators.loading import LoadError, decode_source
from kernelevolve.errors import UserError

URL_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")
# The artifact store drives these through fsspec; any other scheme is refused rather than guessed at.
STORE_SCHEMES = {"s3": "s3://BUCKET/PREFIX", "file": "file:///PATH"}
SUPPORTED_STORES = f"{', '.join(STORE_SCHEMES.values())} or a local folder"


class InputError(UserError):
    """A path or URL argument that cannot be used (exit 2, nothing written)."""


def is_url(text: str) -> bool:
    return bool(URL_PATTERN.match(text))


def shown(raw: str | os.PathLike[str]) -> str:
    """The name as the user typed it, printable: bytes that are not UTF-8 appear as ``\\xff``."""
    return os.fsencode(raw).decode("utf-8", "backslashreplace")


def _label(what: str, raw: str | os.PathLike[str], origin: str | None) -> str:
    return f"{what} {shown(raw)}" + (f" (from {origin})" if origin else "")


def local_name(raw: str | os.PathLike[str], what: str, origin: str | None = None) -> Path:
    """A local path whose name is UTF-8 (DuckDB, JSON and the logs store names as text) and not a URL."""
    text = os.fspath(raw)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{_label(what, raw, origin)}: the name is not valid UTF-8; rename it") from None
    if is_url(text):
        raise InputError(f"{_label(what, raw, origin)} is a URL; a local path is expected here")
    return Path(text).expanduser()


def _kind(path: Path, label: str) -> str:
    """What is at ``path``: ``missing``, ``dir``, ``file`` or ``other`` (a FIFO, a device). Any error other
    than absence (no permission, a symlink loop) is bad input too, not a crash."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError as exc:
        raise InputError(f"cannot access {label}: {exc.strerror or exc}") from None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _existing_file(raw: str | os.PathLike[str], what: str, origin: str | None) -> tuple[Path, bytes]:
    path = local_name(raw, what, origin)
    label = _label(what, raw, origin)
    kind = _kind(path, label)
    if kind != "file":
        problem = {"missing": "does not exist", "dir": "is a directory, not a file"}.get(kind, "is not a regular file")
        raise InputError(f"{label} {problem}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {label}: {exc.strerror or exc}") from None
    return path, data


def source_file(raw: str | os.PathLike[str], what: str, origin: str | None = None) -> tuple[Path, str]:
    """An existing, non-empty file of UTF-8 Python source (a spec or a candidate); returns it and its text."""
    path, data = _existing_file(raw, what, origin)
    try:
        return path, decode_source(data)
    except LoadError as exc:
        raise InputError(f"{_label(what, raw, origin)} {exc}") from None


def text_file(raw: str | os.PathLike[str], what: str, origin: str | None = None) -> tuple[Path, str]:
    """An existing, non-empty UTF-8 text file (a campaign's TOML); returns it and its text."""
    path, data = _existing_file(raw, what, origin)
    label = _label(what, raw, origin)
    if not data.strip():
        raise InputError(f"{label} is empty")
    try:
        return path, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def directory(raw: str | os.PathLike[str], what: str, origin: str | None = None) -> Path:
    """An existing directory (a knowledge base, a code root)."""
    path = local_name(raw, what, origin)
    label = _label(what, raw, origin)
    kind = _kind(path, label)
    if kind != "dir":
        raise InputError(f"{label} is not a directory" + (": it does not exist" if kind == "missing" else ""))
    return path


def output_file(raw: str | os.PathLike[str], what: str, origin: str | None = None) -> Path:
    """A file to (over)write: not a directory, in a folder that exists."""
    path = local_name(raw, what, origin)
    label = _label(what, raw, origin)
    kind = _kind(path, label)
    if kind in ("dir", "other"):
        raise InputError(f"cannot write {label}: it is {'a directory' if kind == 'dir' else 'not a regular file'}")
    if _kind(path.parent, label) != "dir":
        raise InputError(f"cannot write {label}: folder {shown(path.parent)} does not exist")
    return path


def folder_to_create(raw: str | os.PathLike[str], what: str, origin: str | None = None) -> Path:
    """A folder that may not exist yet: if it does it is a directory, else its nearest existing parent is."""
    path = local_name(raw, what, origin)
    label = _label(what, raw, origin)
    kind = _kind(path, label)
    if kind != "missing":
        if kind != "dir":
            raise InputError(f"{label} is not a directory")
        return path
    parent = path.absolute().parent
    while (parent_kind := _kind(parent, label)) == "missing":
        parent = parent.parent
    if parent_kind != "dir":
        raise InputError(f"{label} is not writable: {shown(parent)} is not a directory")
    return path


def store_url(raw: str, origin: str | None = None) -> str:
    """The artifact store: ``s3://bucket/prefix``, ``file:///path`` or a local folder; returns it normalised
    (lower-case scheme). An unknown scheme, one fsspec knows but the store does not drive, or one whose
    implementation is not installed is refused naming the supported forms."""
    label = _label("store URL", raw, origin)
    if not is_url(raw):
        folder_to_create(raw, "artifact store", origin)
        return raw
    scheme, rest = raw.split(":", 1)
    scheme = scheme.lower()
    if scheme not in STORE_SCHEMES:
        raise InputError(f"{label}: {_scheme_problem(scheme)} (supported: {SUPPORTED_STORES})")
    if not rest.startswith("//"):
        raise InputError(f"{label} is malformed: expected {STORE_SCHEMES[scheme]}")
    if scheme == "file":
        folder_to_create(rest[2:], "artifact store", origin)
        return f"file://{rest[2:]}"
    if not rest[2:].strip("/") or rest[2:].startswith("/"):
        raise InputError(f"{label} names no bucket: expected {STORE_SCHEMES[scheme]}")
    missing = _missing_implementation(scheme)
    if missing:
        raise InputError(f"{label}: {missing} (supported: {SUPPORTED_STORES})")
    return f"{scheme}:{rest}"


def _scheme_problem(scheme: str) -> str:
    from fsspec.registry import known_implementations

    if scheme not in known_implementations:
        return f"unknown scheme '{scheme}'"
    missing = _missing_implementation(scheme)
    return missing or f"the artifact store does not support '{scheme}'"


def _missing_implementation(scheme: str) -> str | None:
    """Why fsspec cannot load ``scheme`` here (its package is not installed), or None."""
    from fsspec.registry import known_implementations

    impl = known_implementations.get(scheme, {})
    module = impl.get("class", "").rsplit(".", 1)[0]
    try:
        found = bool(module) and importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return None
    return f"'{scheme}' needs {module.split('.')[0] or 'an fsspec implementation'}, which is not installed"
