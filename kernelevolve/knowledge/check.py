"""``ke kb check``: everything the knowledge base promises, verified.

The index is current, every front matter is valid, every relative link resolves, every repository path a
document names exists, and every code sample is a correct kernel for its op on Triton's CPU interpreter
(the same sandboxed evaluation a search uses). A wrong sample would be copied into every search that
drafts from it, so samples are held to the evaluator, not to a syntax check.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kernelevolve.knowledge.documents import Document, load_documents
from kernelevolve.knowledge.index import index_is_current
from kernelevolve.knowledge.search import REPO_ROOT


def static_problems(root: Path, repo: Path = REPO_ROOT) -> tuple[list[Document], list[str]]:
    docs, problems = load_documents(root)
    if not index_is_current(root, docs):
        problems.append("index.md is stale: run 'ke kb index'")
    for doc in docs:
        base = (root / doc.path).parent
        for link in doc.links():
            target = (base / link.split("#", 1)[0]).resolve()
            if not target.exists():
                problems.append(f"{doc.path}: link {link} does not resolve")
        for code_path in doc.code_paths():
            if not (repo / code_path).exists() and not (root / code_path).exists():
                problems.append(f"{doc.path}: names `{code_path}`, which does not exist in the repository")
    return docs, problems


def sample_problems(docs: list[Document], root: Path, scratch: Path,
                    progress: Callable[[str, str], None] | None = None) -> list[str]:
    """Evaluate every code sample on the cpu target against its op's spec."""
    from interpreters.executor import LocalExecutor
    from interpreters.targets import get_target
    from kernelevolve.builtin_specs import resolve_op

    problems = []
    executor = LocalExecutor(get_target("cpu"), scratch)
    try:
        for doc in (d for d in docs if d.kind == "sample"):
            try:
                spec = resolve_op(doc.op)
            except FileNotFoundError as exc:
                problems.append(f"{doc.path}: {exc}")
                continue
            result = executor.evaluate(spec, (root / doc.path).read_text(encoding="utf-8"))
            if progress:
                progress(doc.path, result.status)
            if result.status != "ok":
                problems.append(f"{doc.path}: {result.status} on the CPU interpreter: {result.reason}")
    finally:
        executor.close()
    return problems
