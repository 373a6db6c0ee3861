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
    found = cycles(module_graph())
    assert not found, found


def test_cycle_finder_finds_a_lazy_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


# Issue #32: kernelevolve/api is the front door. The CLI, the MCP server and the benchmarks call it; it never
# calls back into the CLI, and no command borrows from another command (cli/main.py only wires them together).
FRONT_DOOR = "kernelevolve.api"
CLI = "kernelevolve.cli"
CLI_WIRING = {"kernelevolve.cli.main"}
CLI_FREE = {"kernelevolve.mcp_server"}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def front_door_violations(graph: dict[str, set[str]]) -> list[str]:
    """Edges the front door forbids: api or the MCP server -> the CLI, and one command module -> another."""
    bad = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if (_within(module, FRONT_DOOR) or module in CLI_FREE) and _within(target, CLI):
                bad.append(f"{module} imports {target}")
            if (_within(module, CLI) and module not in CLI_WIRING and _within(target, CLI)
                    and target.rpartition(".")[2].endswith("_cmd")):
                bad.append(f"{module} imports the command module {target}")
    return bad


def test_front_door_imports_no_cli_and_no_command_borrows_from_another() -> None:
    graph = module_graph()
    assert any(_within(m, FRONT_DOOR) for m in graph), "kernelevolve/api is missing"
    assert not front_door_violations(graph), front_door_violations(graph)


def test_front_door_checker_finds_each_kind_of_violation() -> None:
    graph = {"kernelevolve.api.searches": {"kernelevolve.cli.common"},
             "kernelevolve.mcp_server": {"kernelevolve.cli.progress"},
             "kernelevolve.cli.eval_cmd": {"kernelevolve.cli.search_cmd", "kernelevolve.cli.common"},
             "kernelevolve.cli.main": {"kernelevolve.cli.search_cmd"},
             "kernelevolve.cli.search_cmd": {"kernelevolve.api", "kernelevolve.cli.progress"}}
    assert front_door_violations(graph) == [
        "kernelevolve.api.searches imports kernelevolve.cli.common",
        "kernelevolve.cli.eval_cmd imports the command module kernelevolve.cli.search_cmd",
        "kernelevolve.mcp_server imports kernelevolve.cli.progress"]


def full_imports(path: Path) -> set[str]:
    """Every absolute module name a file imports (``from a.b import c`` gives a.b and a.b.c), lazy ones included."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_benchmarks_call_the_front_door_not_the_cli() -> None:
    """A benchmark that runs ``ke`` as a subprocess is a user of the command; one that imports it is not."""
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        bad = sorted(n for n in full_imports(path) if _within(n, CLI))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_front_door_neither_prints_nor_knows_click() -> None:
    """The api returns data; how it is shown is its caller's business (the CLI, a tool call, a script)."""
    for path in sorted((ROOT / "kernelevolve" / "api").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not imports_of(path) & {"click", "rich"}, f"{path.relative_to(ROOT)} imports click or rich"
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        printing = [n.lineno for n in calls if isinstance(n.func, ast.Name) and n.func.id == "print"]
        printing += [n.lineno for n in calls if isinstance(n.func, ast.Attribute) and n.func.attr == "write"
                     and isinstance(n.func.value, ast.Attribute) and n.func.value.attr in ("stdout", "stderr")]
        assert not printing, f"{path.relative_to(ROOT)} prints at lines {printing}"
