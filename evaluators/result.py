"""The evaluation result record (docs/architecture.md §5), plain data so it crosses process and JSON boundaries."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

# too_large: the device's verdict (the problem cannot fit beside nothing), not the kernel's (admission.py)
STATUSES = ("ok", "incorrect", "compile_error", "runtime_error", "timeout", "crash", "rejected", "too_large")


@dataclass
class CaseResult:
    name: str
    status: str = "ok"
    max_abs_err: float | None = None
    latency_ms: float | None = None
    latency_iqr_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    # the spec's other baselines by name (e.g. conv1d's conv2d channels-last trick), timed interleaved too
    baselines_ms: dict[str, float] = field(default_factory=dict)
    floor_ms: float | None = None
    fraction_of_floor: float | None = None
    bottleneck: str | None = None
    # "" or physics.py's flag: "fewer_flops"/"under_launch" (floor re-based) or "faster_than_bytes" (withheld)
    floor_flag: str = ""
    error: str = ""


@dataclass
class EvaluationResult:
    status: str
    reason: str = ""
    fitness: float = 0.0
    target: str = ""
    simulated: bool = False
    timed: bool = False
    cases: list[CaseResult] = field(default_factory=list)
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    launches_per_forward: float | None = None
    roofline_fraction: float | None = None
    bottleneck: str | None = None
    eval_seconds: float = 0.0
    evaluator_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_buggy(self) -> bool:
        return self.status != "ok"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvaluationResult:
        cases = [CaseResult(**c) for c in data.get("cases", [])]
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "cases"}
        return cls(cases=cases, **known)

    @classmethod
    def failure(cls, status: str, reason: str, **kw: Any) -> EvaluationResult:
        assert status in STATUSES and status != "ok", status
        return cls(status=status, reason=_one_line(reason), fitness=0.0, **kw)


def geomean(values: list[float]) -> float | None:
    """Geometric mean of positive ratios; the fitness aggregate over cases (docs/architecture.md §1)."""
    vals = [v for v in values if v and v > 0 and math.isfinite(v)]
    if not vals or len(vals) != len(values):
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
