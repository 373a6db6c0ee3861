"""The field's figures per level, as pure functions over matrix rows (so they are tested without a store).

A row is a dict with ``correct`` (bool) and, when its target timed it, ``speedup_vs_eager`` /
``speedup_vs_compile`` (None where untimed) and ``fraction_of_floor``.

``fast_p`` follows KernelBench: the fraction of the level's problems that are correct AND faster than the
baseline by more than p (strictly: a speedup of exactly p is not fast_p). Choices, where KernelBench is silent:

- an untimed level (no correct row has a speedup against that baseline: the cpu interpreter) has no fast_p at
  all, fast_0 included: None, shown "-". Only a timed level's fast_0 equals its correct rate;
- on a timed level, a correct row without a speedup against that baseline counts as not fast;
- an empty level has no rates (None), not 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

Row = dict[str, Any]
THRESHOLDS: tuple[float, ...] = (0.0, 1.0, 1.5, 2.0)
BASELINES: dict[str, str] = {"eager": "speedup_vs_eager", "compile": "speedup_vs_compile"}


def p_label(p: float) -> str:
    """The JSON key of a threshold: 0, 1, 1.5, 2."""
    return f"{p:g}"


def correct_rate(rows: Sequence[Row]) -> float | None:
    return sum(bool(r["correct"]) for r in rows) / len(rows) if rows else None


def _speedup(row: Row, key: str) -> float | None:
    value = row.get(key)
    return value if row["correct"] and isinstance(value, int | float) and math.isfinite(value) else None


def timed(rows: Sequence[Row], key: str) -> bool:
    """Whether any correct row has a speedup against this baseline (else fast_p has nothing to count)."""
    return any(_speedup(r, key) is not None for r in rows)


def fast_p(rows: Sequence[Row], p: float, key: str = "speedup_vs_eager") -> float | None:
    """Fraction of ``rows`` correct with a speedup > p against ``key``; None when empty or untimed."""
    if not rows or not timed(rows, key):
        return None
    return sum(1 for r in rows if (s := _speedup(r, key)) is not None and s > p) / len(rows)


def fast_p_curve(rows: Sequence[Row], ps: Iterable[float], key: str) -> list[float | None]:
    return [fast_p(rows, p, key) for p in ps]


def geomean_speedup(rows: Sequence[Row], key: str) -> float | None:
    """Geometric mean over the correct rows that have a positive speedup against ``key``."""
    values = [s for r in rows if (s := _speedup(r, key)) is not None and s > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def median_fraction_of_floor(rows: Sequence[Row]) -> float | None:
    values = [r["fraction_of_floor"] for r in rows if r["correct"] and r.get("fraction_of_floor")]
    return statistics.median(values) if values else None


def level_metrics(rows: Sequence[Row], goal: float | None = None) -> dict[str, Any]:
    """Every figure of one level: counts, correct rate, fast_p per baseline and threshold, geomeans, floor."""
    correct = sum(bool(r["correct"]) for r in rows)
    rate = correct_rate(rows)
    return {"correct": correct, "total": len(rows), "rate": None if rate is None else round(rate, 4), "goal": goal,
            "timed": {name: timed(rows, key) for name, key in BASELINES.items()},
            "fast_p": {name: {p_label(p): fast_p(rows, p, key) for p in THRESHOLDS} for name, key in BASELINES.items()},
            "geomean_vs_eager": geomean_speedup(rows, BASELINES["eager"]),
            "geomean_vs_compile": geomean_speedup(rows, BASELINES["compile"]),
            "median_fraction_of_floor": median_fraction_of_floor(rows)}


def by_level(rows: Sequence[Row], goals: dict[str, float] | None = None) -> dict[str, dict[str, Any]]:
    """``level_metrics`` per level (a row's ``family``), levels in name order."""
    levels: dict[str, list[Row]] = {}
    for r in rows:
        levels.setdefault(r["family"], []).append(r)
    return {name: level_metrics(levels[name], (goals or {}).get(name)) for name in sorted(levels)}
