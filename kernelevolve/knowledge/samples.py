"""Reading the knowledge base's code samples: the offline operator's starting points."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelevolve.knowledge.documents import KnowledgeError, docstring_front_matter
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


def front_matter(source: str) -> dict[str, Any]:
    """A sample's front matter (the same YAML parser the knowledge-base checks use); {} when it has none."""
    try:
        return docstring_front_matter("sample", source)[0]
    except KnowledgeError:
        return {}


def code_samples(op: str, root: Path | None = None) -> list[CodeSample]:
    """Samples whose front matter names ``op``, in file-name order (so drafts are deterministic)."""
    samples = []
    for path in sorted(((root or kb_root()) / "code_samples").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        meta = front_matter(source)
        if meta.get("op") != op:
            continue
        tags = meta.get("tags") or ()
        tags = (tags,) if isinstance(tags, str) else tuple(str(t) for t in tags)
        samples.append(CodeSample(path, op, str(meta.get("title", path.stem)), source, tags))
    return samples
