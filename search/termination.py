"""When a run stops: node budget, wall time, stalled progress, or a fitness target (docs/architecture.md §1)."""

from __future__ import annotations

from dataclasses import dataclass

from search.graph import GraphView


@dataclass
class Termination:
    budget: int
    time_limit_s: float | None = None
    stall_after: int | None = None
    fitness_target: float | None = None

    def reason(self, view: GraphView, elapsed_s: float) -> str | None:
        """Why the run should stop now, or ``None`` to continue."""
        count = view.count()
        if count >= self.budget:
            return "budget"
        if self.time_limit_s is not None and elapsed_s >= self.time_limit_s:
            return "time_limit"
        best = view.best(1)
        if self.fitness_target is not None and best and best[0].fitness >= self.fitness_target:
            return "fitness_target"
        if self.stall_after and best:
            since_best = count - best[0].node_id
            if since_best >= self.stall_after:
                return "stalled"
        return None
