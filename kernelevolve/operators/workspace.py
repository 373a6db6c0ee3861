"""The LLM operator's tools: a tiny workspace the model edits, plus lint and knowledge-base search.

The model sees read-only files (the spec, the parent, and any knowledge-base document by path) and one
writable file, ``candidate.py``. Lint runs the evaluator's static checks and a Python compile, then (when the
operator provides one) a sandboxed run on Triton's CPU interpreter against the spec's small test inputs, so
the model can fix a rejected, non-compiling or wrong candidate before it costs an evaluation on the target.
Tool errors are returned to the model as text: a bad tool call is the model's problem to fix, never a crash
of the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelevolve.knowledge.documents import Document
from kernelevolve.knowledge.search import REPO_ROOT

CANDIDATE = "candidate.py"
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)

TOOLS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read spec.py, parent.py, candidate.py, or a knowledge-base document "
     "by its path relative to the knowledge base (for example guidance/perf_fusion.md).",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    {"name": "write_file", "description": "Write the complete candidate (only candidate.py is writable).",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                      "required": ["path", "content"]}},
    {"name": "replace_in_file", "description": "Replace one exact occurrence of old with new in candidate.py.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"},
                                                       "new": {"type": "string"}},
                      "required": ["path", "old", "new"]}},
    {"name": "lint", "description": "Static anti-cheat checks and a compile of candidate.py; returns problems.",
     "input_schema": {"type": "object", "properties": {}}},
    {"name": "grep", "description": "Exact-string (or, with regex true, regular-expression) search over the knowledge "
     "base and the configured code roots; returns matching lines with context. Read a hit with read_file.",
     "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}, "regex": {"type": "boolean"}},
                      "required": ["pattern"]}},
    {"name": "kb_search", "description": "Search the knowledge base; optional bottleneck (memory, compute, "
     "latency, occupancy, registers, launch, numerics, correctness, compile) and phase (draft, debug, optimize).",
     "input_schema": {"type": "object", "properties": {"query": {"type": "string"},
                                                       "bottleneck": {"type": "string"},
                                                       "phase": {"type": "string"}},
                      "required": ["query"]}},
]


def extract_candidate(text: str) -> str | None:
    """The candidate in a plain-text reply: exactly one fenced python block, else None."""
    blocks = _FENCE.findall(text or "")
    return blocks[0].strip() + "\n" if len(blocks) == 1 else None


def lint(source: str) -> str:
    from evaluators.static_checks import check_source

    try:
        compile(source, CANDIDATE, "exec")
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    problems = check_source(source)
    if not problems:
        return "ok: static checks passed and the file compiles"
    return "\n".join(str(p) for p in problems)


class Workspace:
    def __init__(self, spec_source: str, parent_source: str | None, kb_root: Path, target: str | None,
                 vendor: str | None, interpret: Callable[[str], str] | None = None,
                 docs: list[Document] | None = None, code_roots: list[Path] | None = None) -> None:
        self.interpret = interpret
        self.code_roots = list(code_roots or [])
        self.docs = docs
        self.files = {"spec.py": spec_source}
        if parent_source is not None:
            self.files["parent.py"] = parent_source
            self.files[CANDIDATE] = parent_source  # start from the parent: small edits are cheap
        self.kb_root, self.target, self.vendor = kb_root, target, vendor
        self.written = False
        self.calls: list[str] = []

    @property
    def candidate(self) -> str | None:
        return self.files.get(CANDIDATE) if self.written else None

    def run(self, name: str, args: dict[str, Any]) -> str:
        self.calls.append(name)
        try:
            handler = getattr(self, f"_tool_{name}")
        except AttributeError:
            return f"error: unknown tool {name!r}"
        try:
            return handler(**args)
        except TypeError as exc:
            return f"error: bad arguments for {name}: {exc}"

    def _tool_read_file(self, path: str) -> str:
        if path in self.files:
            return self.files[path]
        for root in [self.kb_root, *self.code_roots, REPO_ROOT]:
            doc = (root / path).resolve()
            if root.resolve() in doc.parents and doc.is_file():
                return doc.read_text(encoding="utf-8", errors="replace")
        return (f"error: no file {path!r} (readable: {', '.join(sorted(self.files))}, a knowledge-base path, "
                "or a path grep returned)")

    def _tool_write_file(self, path: str, content: str) -> str:
        if path != CANDIDATE:
            return f"error: only {CANDIDATE} is writable"
        self.files[CANDIDATE], self.written = content, True
        return f"wrote {len(content.splitlines())} lines to {CANDIDATE}"

    def _tool_replace_in_file(self, path: str, old: str, new: str) -> str:
        current = self.files.get(CANDIDATE)
        if path != CANDIDATE or current is None:
            return f"error: only an existing {CANDIDATE} can be edited (write it first)"
        count = current.count(old)
        if count != 1:
            return f"error: old text occurs {count} times in {CANDIDATE}; it must occur exactly once"
        self.files[CANDIDATE], self.written = current.replace(old, new, 1), True
        return "replaced"

    def _tool_lint(self) -> str:
        current = self.files.get(CANDIDATE)
        if current is None:
            return f"error: no {CANDIDATE} yet"
        report = lint(current)
        if report.startswith("ok") and self.interpret is not None:
            report += "\n" + self.interpret(current)
        return report

    def _tool_grep(self, pattern: str, regex: bool = False) -> str:
        from kernelevolve.knowledge.search import grep

        try:
            found = grep(pattern, [self.kb_root, *self.code_roots], regex=bool(regex), limit=20)
        except re.error as exc:
            return f"error: bad regular expression: {exc}"
        return "\n\n".join(f"{m.path}:{m.line}\n{m.text}" for m in found) or "no matches"

    def _tool_kb_search(self, query: str, bottleneck: str | None = None, phase: str | None = None) -> str:
        from kernelevolve.knowledge.documents import BOTTLENECKS, PHASES, load_documents
        from kernelevolve.knowledge.search import rank, select

        if self.docs is None:
            self.docs = load_documents(self.kb_root)[0]
        chosen = select(self.docs, self.target, self.vendor, bottleneck if bottleneck in BOTTLENECKS else None,
                        phase if phase in PHASES else None)
        found = rank(chosen, query, k=4)
        return "\n\n".join(f"[{p.path}:{p.start_line}] {p.title}\n{p.excerpt}" for p in found) or "no matches"
