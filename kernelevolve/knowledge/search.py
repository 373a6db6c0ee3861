"""Deep search over the knowledge base (docs/architecture.md §8).

Two stages, as an engineer would use a handbook: first the index (front matter) picks the documents that
apply to this target, this bottleneck or error class and this phase; then the text of those documents is
ranked against the query and the best passages are returned with their context. Documents that name
repository files in backticks have those files followed, so a passage about the anti-cheat rules brings the
lines of `evaluators/static_checks.py` that implement them. Exact-string, regex and file-name search cover
everything else, over the knowledge base and any configured code roots.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kernelevolve.knowledge.documents import Document

_WORD = re.compile(r"[a-z0-9_]+")
_STOP = frozenset("a an and are as at be by for from how if in into is it its of on or that the this to when "
                  "with what which why".split())
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Passage:
    path: str
    title: str
    score: float
    excerpt: str
    start_line: int = 1
    kind: str = "doc"  # doc | sample | code
    why: list[str] = field(default_factory=list)


def terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1]


# A target record's vendor -> the tag documents use for that family (the MTIA targets' vendor is "meta").
DOC_VENDOR_TAGS = {"meta": "mtia"}


def hardware_matches(doc: Document, target: str | None, vendor: str | None) -> bool:
    if target is None or "any" in doc.hardware:
        return True
    tag = DOC_VENDOR_TAGS.get(vendor or "", vendor)
    return target in doc.hardware or (tag is not None and tag in doc.hardware)


def select(docs: list[Document], target: str | None = None, vendor: str | None = None,
           bottleneck: str | None = None, phase: str | None = None) -> list[tuple[Document, list[str]]]:
    """Stage one: the documents whose front matter fits, each with why it was kept (for the prompt)."""
    chosen = []
    for doc in docs:
        if not hardware_matches(doc, target, vendor):
            continue
        why = []
        if target and "any" not in doc.hardware:
            why.append(f"hardware {target}")
        if bottleneck and doc.bottleneck and bottleneck not in doc.bottleneck:
            continue
        if bottleneck and bottleneck in doc.bottleneck:
            why.append(f"bottleneck {bottleneck}")
        if phase and doc.phase and phase not in doc.phase:
            continue
        chosen.append((doc, why))
    return chosen


def _paragraphs(body: str) -> list[tuple[int, str]]:
    """(first line number, text) of blank-line separated blocks; fenced code stays in one block."""
    blocks, current, start, fenced = [], [], 1, False
    for number, line in enumerate(body.splitlines(), start=1):
        if line.strip().startswith("```"):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                blocks.append((start, "\n".join(current)))
            current, start = [], number + 1
            continue
        current.append(line)
    if current:
        blocks.append((start, "\n".join(current)))
    return blocks


def rank(chosen: list[tuple[Document, list[str]]], query: str, k: int = 5, max_chars: int = 1200) -> list[Passage]:
    """Stage two: BM25-style scoring of each chosen document's passages against the query."""
    q = terms(query)
    passages = []
    for doc, why in chosen:
        for start, text in _paragraphs(doc.body):
            passages.append((doc, why, start, text, Counter(terms(doc.title + " " + text))))
    if not passages:
        return []
    n = len(passages)
    avg_len = sum(sum(c.values()) for *_, c in passages) / n or 1.0
    df = Counter(t for *_, c in passages for t in set(c))
    scored: list[Passage] = []
    for doc, why, start, text, counts in passages:
        length = sum(counts.values()) or 1
        score = 0.0
        for t in q:
            if counts[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * counts[t] * 2.2 / (counts[t] + 1.2 * (0.25 + 0.75 * length / avg_len))
        score += 0.5 * len(why)  # metadata fit breaks ties towards the target's own documents
        if score > 0:
            scored.append(Passage(doc.path, doc.title, round(score, 3), text[:max_chars], start, doc.kind, why))
    scored.sort(key=lambda p: (-p.score, p.path, p.start_line))
    best: list[Passage] = []
    per_doc: Counter[str] = Counter()
    for p in scored:
        if per_doc[p.path] < 2:  # at most two passages of one document: breadth over depth
            best.append(p)
            per_doc[p.path] += 1
        if len(best) == k:
            break
    return best


def follow_code(passages: list[Passage], docs: list[Document], query: str, repo: Path = REPO_ROOT,
                context: int = 6, limit: int = 3) -> list[Passage]:
    """Excerpts of the repository files that the retrieved documents name, around the query's best line."""
    by_path = {d.path: d for d in docs}
    q = set(terms(query))
    out: list[Passage] = []
    seen: set[str] = set()
    for p in passages:
        doc = by_path.get(p.path)
        for code_path in doc.code_paths() if doc else []:
            file = repo / code_path
            if code_path in seen or not file.is_file():
                continue
            seen.add(code_path)
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
            hits = [(len(q & set(terms(line))), i) for i, line in enumerate(lines)]
            top, at = max(hits, default=(0, 0))
            if top == 0:
                continue
            lo, hi = max(0, at - context), min(len(lines), at + context + 1)
            out.append(Passage(code_path, f"{code_path} (named by {p.path})", float(top),
                               "\n".join(lines[lo:hi]), lo + 1, "code", [f"referenced by {p.path}"]))
            if len(out) == limit:
                return out
    return out


@dataclass
class Match:
    path: str
    line: int
    text: str


def grep(pattern: str, roots: list[Path], regex: bool = False, context: int = 2, limit: int = 50,
         suffixes: tuple[str, ...] = (".md", ".py", ".toml")) -> list[Match]:
    """Exact (case-insensitive) or regex search with ``context`` lines around each hit."""
    matcher = re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE)
    found: list[Match] = []
    for root in roots:
        for file in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in suffixes):
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
            for i, line in enumerate(lines):
                if matcher.search(line):
                    lo, hi = max(0, i - context), min(len(lines), i + context + 1)
                    found.append(Match(_display(file, root), i + 1, "\n".join(lines[lo:hi])))
                    if len(found) == limit:
                        return found
    return found


def find_files(fragment: str, roots: list[Path], limit: int = 50) -> list[str]:
    fragment = fragment.lower()
    return [_display(p, root) for root in roots for p in sorted(root.rglob("*"))
            if p.is_file() and fragment in p.name.lower()][:limit]


def _display(path: Path, root: Path) -> str:
    try:
        return path.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return path.relative_to(root).as_posix()
