"""Built-in operator specs (references): ``--op NAME`` is ``builtin_specs/NAME.py``; anything else is a path."""

from __future__ import annotations

from pathlib import Path

OPS_DIR = Path(__file__).resolve().parent


def builtin_ops() -> list[str]:
    return sorted(p.stem for p in OPS_DIR.glob("*.py") if not p.stem.startswith("_"))


def resolve_op(op: str) -> Path:
    """A built-in name or a path to a spec file. An unknown name raises FileNotFoundError; a path that is not
    a usable spec file (missing, a directory, binary or empty, a name that is not UTF-8, a URL) raises
    ``InputError``. Both carry a one-line message."""
    from kernelevolve.inputs import local_name, source_file

    local_name(op, "spec file")  # a name that is not UTF-8, or a URL
    builtin = OPS_DIR / f"{op}.py"
    if "/" not in op and not op.endswith(".py") and builtin.is_file():
        return builtin
    if "/" in op or op.endswith(".py") or Path(op).expanduser().exists():
        return source_file(op, "spec file")[0].resolve()
    raise FileNotFoundError(f"unknown op '{op}' (built-in: {', '.join(builtin_ops())}; or pass a spec file path)")
