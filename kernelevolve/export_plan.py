"""What an export routes where: per measured case, the node whose kernel serves it (or PyTorch), and the
look-up table and header text every exported format shares. Kept apart from the formats so that each of them
(``export``, ``export_torch_library``, ``export_kernelbench``) depends on it, and none on another."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelevolve.export_runtime import signature


@dataclass
class CaseRoute:
    case: str
    node_id: int | None  # None: PyTorch
    speedup_vs_eager: float
    latency_ms: float


@dataclass
class ExportPlan:
    default_node: int
    routes: list[CaseRoute] = field(default_factory=list)
    timings_from: str = ""
    files: list[str] = field(default_factory=list)
    kernel_files: dict[int, str] = field(default_factory=dict)  # node -> the file its kernel was written to

    @property
    def untimed(self) -> bool:
        return not self.routes

    @property
    def won(self) -> list[CaseRoute]:
        return [r for r in self.routes if r.node_id is not None]

    @property
    def lost(self) -> list[CaseRoute]:
        return [r for r in self.routes if r.node_id is None]

    @property
    def kernel_nodes(self) -> list[int]:
        """The default node first, then every other node some case is routed to."""
        return [self.default_node] + sorted({r.node_id for r in self.won} - {self.default_node})


def plan_dispatch(evaluations: dict[int, dict[str, Any]], default_node: int) -> ExportPlan:
    """Per measured case, the fastest correct node; PyTorch where even that one was not faster than eager."""
    plan = ExportPlan(default_node)
    fastest: dict[str, tuple[tuple[float, bool, int], float]] = {}  # case -> (sort key, eager ms)
    for node_id, evaluation in evaluations.items():
        if evaluation.get("status") != "ok":
            continue
        for case in evaluation.get("cases", []):
            latency, eager = case.get("latency_ms"), case.get("eager_ms")
            if not latency or not eager:
                continue
            key = (latency, node_id != default_node, node_id)  # ties go to the default node, then the older
            if case["name"] not in fastest or key < fastest[case["name"]][0]:
                fastest[case["name"]] = (key, eager)
    for name, ((latency, _, node_id), eager) in fastest.items():
        plan.routes.append(CaseRoute(name, node_id if eager / latency > 1.0 else None, eager / latency, latency))
    head = evaluations.get(default_node) or {}
    plan.timings_from = ("a simulation (" + str(head.get("target")) + ")" if head.get("simulated")
                         else "timed on " + str((head.get("extra") or {}).get("gpu", {}).get("name")
                                                or head.get("target")))
    return plan


def case_signatures(spec_path: Path) -> dict[str, tuple]:
    """Each production case's input signature, from meta tensors (no data is made)."""
    from evaluators.spec import load_spec

    spec = load_spec(spec_path)
    return {name: signature(args) for name, args in spec.cases("prod", "meta").items()}


def route_table(plan: ExportPlan, spec_path: Path) -> dict[tuple, int | None]:
    """The plan as every exported format looks it up: input signature -> node id, None for PyTorch."""
    signatures = case_signatures(spec_path)
    return {signatures[r.case]: r.node_id for r in plan.routes if r.case in signatures}


def listing(rows: list[CaseRoute]) -> str:
    return "\n".join(f"  - {r.case} ({r.speedup_vs_eager:.2f}x vs eager"
                     + (f", node {r.node_id})" if r.node_id is not None else ")") for r in rows) or "  (none)"


def route_listing(plan: ExportPlan) -> str:
    """The routes as the header of an exported file lists them."""
    return (f"Timings from {plan.timings_from}. Measured cases routed to a Triton kernel (the node fastest there):\n"
            f"{listing(plan.won)}\nPyTorch (the op's reference) is used where no kernel was faster than eager:\n"
            f"{listing(plan.lost)}\nInputs whose shapes and dtypes match no measured case go to node "
            f"{plan.default_node}, the overall best, checked correct on every case.")


def wrapped(text: str, width: int = 110) -> str:
    """``text`` as a docstring paragraph (exported headers keep lines short)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width))
