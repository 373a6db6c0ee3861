"""One evaluation job, typed: what the pool asks of the evaluator, with every default stated here once.

Why: the job used to be a dict read with ``job.get(key, default)`` in the worker, the sandbox and the executor,
whose defaults disagreed (a full timing's length was 150 ms in one place and 50 in another). It still crosses
the worker's stdin as one JSON line (``to_dict``), and ``from_dict`` refuses a key it does not know, so a typo
fails at once instead of silently taking a default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

FULL_TARGET_MS = 150.0  # ms per callable and case in a full timing: ``ke eval`` and a run's re-measurements
SEARCH_TARGET_MS = 50.0  # ... in a search node's timing, which screening may cut shorter still
# A search node's timing stops once every median is known to 0.5% (relative standard error): the timing holds
# the GPU exclusively, so its length caps a GPU's slots (issue #31); a full timing always runs its target.
SEARCH_PRECISION = 0.005
DEFAULT_SEEDS = (0, 1, 2)
DEFAULT_TIMEOUT_S = 120.0


@dataclass
class EvaluationJob:
    """``spec_path`` and ``candidate_path`` are files the worker can read (a pool writes each text once under
    its hash). ``cases``: the case set checked (``prod``, ``test`` or ``sim``; None: ``test`` on the cpu
    device, else ``prod``). ``simulate``: the hardware record to estimate on, instead of timing."""

    spec_path: str
    candidate_path: str
    device: str = "cpu"
    target: str = "cpu"
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_limit_mb: int | None = None
    seeds: list[int] = field(default_factory=lambda: list(DEFAULT_SEEDS))
    cases: str | None = None
    static_checks: bool = True
    time: bool = True
    compile_baseline: bool = True
    profile: bool = True
    ncu: bool = False
    target_ms: float = FULL_TARGET_MS
    precision: float | None = None
    screen_below: float | None = None
    peaks: dict[str, Any] | None = None
    baseline_cache_dir: str | None = None
    simulate: dict[str, Any] | None = None
    keep_workdir: bool = False
    id: int | None = None

    @property
    def which(self) -> str:
        return self.cases or ("test" if self.device == "cpu" else "prod")

    def search_node(self, screen_below: float | None) -> EvaluationJob:
        """The same job at a search node's length: no profile, screened against ``screen_below``."""
        return dataclasses.replace(self, profile=False, target_ms=SEARCH_TARGET_MS, precision=SEARCH_PRECISION,
                                   screen_below=screen_below)

    def timing_options(self, judged_err: dict[str, float]) -> dict[str, Any]:
        """Keyword arguments of ``performance.measure`` for this job."""
        return {"compile_baseline": self.compile_baseline, "peaks": self.peaks, "profile": self.profile,
                "ncu": self.ncu, "baseline_dir": self.baseline_cache_dir, "screen_below": self.screen_below,
                "target_ms": self.target_ms, "precision": self.precision, "judged_err": judged_err}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvaluationJob:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"evaluation job has unknown keys: {', '.join(unknown)}")
        return cls(**data)

    @classmethod
    def coerce(cls, job: EvaluationJob | dict[str, Any]) -> EvaluationJob:
        return job if isinstance(job, EvaluationJob) else cls.from_dict(job)
