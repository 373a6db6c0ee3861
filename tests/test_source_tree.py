"""Every parse in the project goes through ``evaluators.source_tree.parse_source``.

CPython 3.11's ``ast.parse`` is not thread-safe (gh-106905: "AST constructor recursion depth
mismatch"); CI hit it once in ``test_several_runs_share_the_pools``, where pools judge several
runs from threads of one process. The lock only helps if nobody goes around it.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from evaluators.source_tree import parse_source

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kernelevolve", "search", "interpreters", "evaluators")


def direct_parse_calls(path: Path) -> list[int]:
    """Line numbers of ``ast.parse(...)`` calls in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "parse"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "ast"
    ]


def test_no_module_parses_around_the_lock() -> None:
    offenders = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "code_samples" in path.parts or path.name == "source_tree.py":
                continue
            offenders += [f"{path.relative_to(ROOT)}:{line}" for line in direct_parse_calls(path)]
    assert not offenders, f"call evaluators.source_tree.parse_source instead: {offenders}"


def test_the_finder_sees_a_direct_call(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import ast\n\ntree = ast.parse('x = 1')\n")
    assert direct_parse_calls(sample) == [3]


def test_threads_parse_the_same_trees_as_one_thread() -> None:
    source = (ROOT / "evaluators" / "static_checks.py").read_text(encoding="utf-8")
    expected = ast.dump(ast.parse(source))
    seen: list[str] = []

    def work() -> None:
        for _ in range(5):
            seen.append(ast.dump(parse_source(source)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [expected] * 20
