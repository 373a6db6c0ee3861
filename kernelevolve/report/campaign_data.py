"""A campaign as the report sees it: its record and, per slot, the run with its fitness in search order."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.records import RunRecord


@dataclass
class CampaignRun:
    slot: int
    run: RunRecord
    fitness: list[float]  # per node, in node order; failed nodes as NaN
    best_fitness: float | None
    best_node: int | None
    speedup_vs_eager: float | None
    speedup_vs_compile: float | None


@dataclass
class CampaignData:
    campaign_id: str
    name: str
    status: str
    config: dict[str, Any]
    runs: list[CampaignRun]

    @property
    def is_sweep(self) -> bool:
        return self.config.get("kind") == "aten-sweep"


def find_campaign(meta: MetadataStore, ref: str) -> dict[str, Any] | None:
    """A campaign named ``ref``, else the one whose id is ``ref`` (found through its runs' configs)."""
    found = meta.campaign_by_name(ref)
    if found is not None:
        return found
    runs = meta.campaign_runs(ref)
    if not runs:
        return None
    name = next((r.config["campaign"].get("name") for r in runs.values() if r.config["campaign"].get("name")), None)
    found = meta.campaign_by_name(name) if name else None
    if found is not None and found["campaign_id"] == ref:
        return found
    return {"campaign_id": ref, "name": name or ref, "status": "unknown", "config": {}}


def load_campaign(meta: MetadataStore, campaign: dict[str, Any]) -> CampaignData:
    rows = []
    for slot, run in sorted(meta.campaign_runs(campaign["campaign_id"]).items()):
        nodes = meta.nodes(run.run_id)
        fitness = [n.fitness if not n.is_buggy and math.isfinite(n.fitness) else math.nan for n in nodes]
        best = max((n for n in nodes if not n.is_buggy and math.isfinite(n.fitness)),
                   key=lambda n: (n.fitness, -n.node_id), default=None)
        rows.append(CampaignRun(slot, run, fitness, best.fitness if best else None, best.node_id if best else None,
                                best.speedup_vs_eager if best else None, best.speedup_vs_compile if best else None))
    return CampaignData(campaign["campaign_id"], campaign["name"], campaign["status"], campaign["config"], rows)
