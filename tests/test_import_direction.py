"""docs/architecture.md §2: kernelevolve -> search, interpreters -> evaluators; nothing points back up, and
evaluators imports only torch, triton, numpy and the standard library (it must run alone on a GPU host)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = {"kernelevolve", "search", "interpreters", "evaluators", "knowledge_base"}
ALLOWED_PROJECT_IMPORTS = {
    "kernelevolve": PROJECT,
    "search": {"search"},
    "interpreters": {"interpreters", "evaluators"},
    "evaluators": {"evaluators"},
    "knowledge_base": {"knowledge_base"},
}
EVALUATOR_THIRD_PARTY = {"torch", "triton", "numpy"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def package_files(package: str) -> list[Path]:
    return [p for p in (ROOT / package).rglob("*.py") if "code_samples" not in p.parts]


@pytest.mark.parametrize("package", sorted(ALLOWED_PROJECT_IMPORTS))
def test_no_upward_imports(package: str) -> None:
    for path in package_files(package):
        bad = (imports_of(path) & PROJECT) - ALLOWED_PROJECT_IMPORTS[package]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_evaluators_use_only_torch_triton_numpy_and_stdlib() -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in package_files("evaluators"):
        foreign = imports_of(path) - stdlib - EVALUATOR_THIRD_PARTY - {"evaluators"}
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}"


def test_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from kernelevolve.runner import SearchRunner\nimport duckdb\n")
    assert imports_of(bad) & PROJECT == {"kernelevolve"}
    assert "duckdb" in imports_of(bad)


# The ATen sweep's own lowering package imports its __init__'s helpers back; issue #32 retires the package.
CYCLES_ALLOWED_WITHIN = "kernelevolve.aten.lowering"


def module_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports, lazy imports inside functions included."""
    modules: dict[str, Path] = {}
    for package in sorted(PROJECT):
        for path in package_files(package):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(owner(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here
                for _ in range(max(node.level - 1, 0)):
                    base = base.rpartition(".")[0]
                module = (base + ("." + node.module if node.module else "")) if node.level else (node.module or "")
                found.update(owner(f"{module}.{alias.name}") or owner(module) for alias in node.names)
        graph[name] = {m for m in found if m and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in graph), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    """Module A importing B while B imports A (even lazily, inside a function) made export.py and its formats,
    and matmul.py and matmul_forms.py, one knot each: neither side could be read or changed alone."""
    bad = [c for c in cycles(module_graph()) if not all(m.startswith(CYCLES_ALLOWED_WITHIN) for m in c)]
    assert not bad, bad


def test_cycle_finder_finds_a_lazy_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
