"""The knowledge base as data: markdown documents and code samples, each with validated front matter.

Front matter is what retrieval is conditioned on (docs/architecture.md §8): the hardware a document applies to, the
bottlenecks or error classes it helps with, and the search phase it is for. It is validated here, strictly,
because a typo in a tag silently hides a document from every search that should find it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evaluators.source_tree import parse_source

BOTTLENECKS = frozenset({"memory", "compute", "latency", "occupancy", "registers", "launch", "numerics",
                         "correctness", "compile"})
PHASES = frozenset({"draft", "debug", "optimize"})
VENDORS = frozenset({"any", "nvidia", "amd", "mtia", "cpu"})
INDEX_NAME = "index.md"
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_CODE_PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|toml|md|json|sh|yaml))`")


class KnowledgeError(Exception):
    """A document that cannot be used (one line: the file and what is wrong)."""


@dataclass(frozen=True)
class Document:
    path: str  # relative to the knowledge-base root, with forward slashes
    title: str
    hardware: tuple[str, ...]
    bottleneck: tuple[str, ...]
    phase: tuple[str, ...]
    summary: str
    body: str
    kind: str = "doc"  # doc | sample
    op: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def section(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    def links(self) -> list[str]:
        """Relative links to other documents (external URLs and anchors are not checked here)."""
        return [m for m in _LINK.findall(self.body) if "://" not in m and not m.startswith(("#", "mailto:"))]

    def code_paths(self) -> list[str]:
        """Repository files the document names in backticks: deep search follows them."""
        return sorted(set(_CODE_PATH.findall(self.body)))


def known_targets() -> dict[str, str]:
    """target name -> vendor, from the target records."""
    from interpreters.targets import load_targets

    return {t.name: t.vendor for t in load_targets().values()}


def _as_tuple(path: str, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise KnowledgeError(f"{path}: front matter '{key}' must be a list of names, got {value!r}")
    return tuple(v.strip().lower() for v in value)


def _validate(path: str, meta: dict[str, Any], targets: dict[str, str]) -> tuple:
    hardware = _as_tuple(path, "hardware", meta.get("hardware"))
    bottleneck = _as_tuple(path, "bottleneck", meta.get("bottleneck"))
    phase = _as_tuple(path, "phase", meta.get("phase"))
    if not hardware:
        raise KnowledgeError(f"{path}: front matter needs 'hardware' (a list; [any] if it applies everywhere)")
    unknown = [h for h in hardware if h not in VENDORS and h not in targets]
    if unknown:
        raise KnowledgeError(f"{path}: unknown hardware {unknown} (vendors: {sorted(VENDORS)}; targets: "
                             f"{sorted(targets)})")
    if bad := [b for b in bottleneck if b not in BOTTLENECKS]:
        raise KnowledgeError(f"{path}: unknown bottleneck {bad} (known: {sorted(BOTTLENECKS)})")
    if bad := [p for p in phase if p not in PHASES]:
        raise KnowledgeError(f"{path}: unknown phase {bad} (known: {sorted(PHASES)})")
    return hardware, bottleneck, phase


def split_front_matter(path: str, text: str) -> tuple[dict[str, Any], str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise KnowledgeError(f"{path}: no front matter (the file must start with a '---' block)")
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---")
    except StopIteration:
        raise KnowledgeError(f"{path}: front matter is not closed with '---'") from None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"{path}: front matter is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(meta, dict):
        raise KnowledgeError(f"{path}: front matter must be a mapping")
    return meta, "\n".join(lines[end + 1:]).strip() + "\n"


def _first_heading(body: str) -> str:
    for line in body.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def parse_markdown(path: Path, root: Path, targets: dict[str, str]) -> Document:
    rel = path.relative_to(root).as_posix()
    meta, body = split_front_matter(rel, path.read_text(encoding="utf-8"))
    hardware, bottleneck, phase = _validate(rel, meta, targets)
    title = str(meta.get("title") or _first_heading(body) or path.stem)
    summary = str(meta.get("summary") or "").strip()
    if not summary:
        raise KnowledgeError(f"{rel}: front matter needs a one-sentence 'summary' (it goes into index.md)")
    return Document(rel, title, hardware, bottleneck, phase, summary, body)


def docstring_front_matter(name: str, source: str) -> tuple[dict[str, Any], str]:
    """A code sample's front matter (at the top of its module docstring) and the rest of the docstring."""
    import ast

    try:
        doc = ast.get_docstring(parse_source(source)) or ""
    except SyntaxError as exc:
        raise KnowledgeError(f"{name}: not valid Python (line {exc.lineno})") from None
    return split_front_matter(name, doc)


def parse_sample(path: Path, root: Path, targets: dict[str, str]) -> Document:
    rel = path.relative_to(root).as_posix()
    source = path.read_text(encoding="utf-8")
    meta, explanation = docstring_front_matter(rel, source)
    if not meta.get("op"):
        raise KnowledgeError(f"{rel}: a code sample's front matter needs 'op' (the operator it implements)")
    hardware, bottleneck, phase = _validate(rel, {"phase": ["draft", "optimize"], **meta}, targets)
    tags = _as_tuple(rel, "tags", meta.get("tags"))
    title = str(meta.get("title") or path.stem)
    summary = str(meta.get("summary") or title)
    return Document(rel, title, hardware, bottleneck, phase, summary, explanation + "\n```python\n" + source + "```\n",
                    kind="sample", op=str(meta["op"]), tags=tags)


def load_documents(root: Path) -> tuple[list[Document], list[str]]:
    """Every document and sample under ``root`` (index.md excluded), plus one problem line per bad file."""
    targets = known_targets()
    docs: list[Document] = []
    problems: list[str] = []
    for path in sorted(root.rglob("*.md")):
        if path.name == INDEX_NAME and path.parent == root or path.name.lower() == "readme.md":
            continue
        try:
            docs.append(parse_markdown(path, root, targets))
        except KnowledgeError as exc:
            problems.append(str(exc))
    for path in sorted((root / "code_samples").glob("*.py")):
        try:
            docs.append(parse_sample(path, root, targets))
        except KnowledgeError as exc:
            problems.append(str(exc))
    return docs, problems
