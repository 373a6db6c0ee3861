"""DESIGN §2: kernelevolve -> search, interpreters -> evaluators; nothing points back up, and
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
