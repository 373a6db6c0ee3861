"""Built-in operator specs: ``--op NAME`` resolves to ``kernelevolve/ops/NAME.py``; anything else is a path."""

from __future__ import annotations

from pathlib import Path

OPS_DIR = Path(__file__).resolve().parent


def builtin_ops() -> list[str]:
    return sorted(p.stem for p in OPS_DIR.glob("*.py") if not p.stem.startswith("_"))


def resolve_op(op: str) -> Path:
    """A built-in name or a path to a spec file; raises FileNotFoundError with a one-line message."""
    builtin = OPS_DIR / f"{op}.py"
    if "/" not in op and not op.endswith(".py") and builtin.is_file():
        return builtin
    path = Path(op).expanduser()
    if path.is_file():
        return path.resolve()
    if "/" in op or op.endswith(".py"):
        raise FileNotFoundError(f"spec file {op} does not exist")
    raise FileNotFoundError(f"unknown op '{op}' (built-in: {', '.join(builtin_ops())}; or pass a spec file path)")
