"""Reading the knowledge base's code samples: the offline operator's starting points."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

from knowledge_base import ROOT as DEFAULT_ROOT


@dataclass(frozen=True)
class CodeSample:
    path: Path
    op: str
    title: str
    source: str
    tags: tuple[str, ...] = field(default_factory=tuple)


def kb_root() -> Path:
    return Path(os.environ.get("KE_KB_DIR", DEFAULT_ROOT))


def front_matter(source: str) -> dict[str, str]:
    """The ``---``-delimited block at the top of a sample's docstring, as flat key/value strings."""
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError:
        return {}
    lines = doc.strip().splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    meta: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip()
    return meta


def code_samples(op: str, root: Path | None = None) -> list[CodeSample]:
    """Samples whose front matter names ``op``, in file-name order (so drafts are deterministic)."""
    samples = []
    for path in sorted(((root or kb_root()) / "code_samples").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        meta = front_matter(source)
        if meta.get("op") != op:
            continue
        tags = tuple(t.strip() for t in meta.get("tags", "").strip("[]").split(",") if t.strip())
        samples.append(CodeSample(path, op, meta.get("title", path.stem), source, tags))
    return samples
