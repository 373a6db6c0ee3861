"""An ATen sweep's coverage matrix for the report: from a matrix JSON that ``ke aten-sweep`` wrote (so committed
results, such as a GPU host's, render anywhere), or rebuilt from the store's ``aten-sweep@<target>`` campaign
(so a sweep still running shows its state so far)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernelevolve.errors import UserError
from kernelevolve.store.metadata import MetadataStore
from kernelevolve.store.objects import ObjectStore

MATRIX_KEYS = ("target", "summary", "ops")
ROW_KEYS = ("op", "family", "correct", "status")


def load_matrix_file(path: Path) -> dict[str, Any]:
    """A coverage matrix JSON, checked for the keys the views read; anything else is bad input."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or any(k not in data for k in MATRIX_KEYS) or not isinstance(data["ops"], list):
        raise UserError(f"{path} is not an ATen sweep matrix (needs {', '.join(MATRIX_KEYS)}; "
                        "'ke aten-sweep' writes one)")
    for i, row in enumerate(data["ops"]):
        if not isinstance(row, dict) or any(k not in row for k in ROW_KEYS):
            raise UserError(f"{path}: ops[{i}] lacks one of {', '.join(ROW_KEYS)}")
    data.setdefault("source", str(path))
    return data


def matrix_from_store(meta: MetadataStore, objects: ObjectStore, campaign: dict[str, Any]) -> dict[str, Any]:
    """The matrix ``ke aten-sweep`` would write, for the ops the campaign has runs for so far (suite order)."""
    from kernelevolve.aten import SUITE, get_op
    from kernelevolve.aten.matrix import coverage_row, summarize

    order = {op.name: i for i, op in enumerate(SUITE)}
    runs = []
    for run in meta.campaign_runs(campaign["campaign_id"]).values():
        try:
            runs.append((get_op(run.config.get("aten") or run.op), run))
        except KeyError:  # an op this version's suite no longer has
            continue
    runs.sort(key=lambda pair: order[pair[0].name])
    rows = [coverage_row(meta, objects, op, meta.get_run(run.run_id)) for op, run in runs]
    config = campaign.get("config") or {}
    return {"target": config.get("hw", campaign["name"].removeprefix("aten-sweep@")),
            "simulated": bool(config.get("simulate")), "campaign_id": campaign["campaign_id"],
            "source": f"store: campaign {campaign['name']}", "summary": summarize(rows), "ops": rows}


def problem_sweep_file(path: Path) -> dict[str, Any] | None:
    """The file's matrix if it is a ``ke sweep`` one (hw, levels, rows), else None (an ATen matrix, or bad input
    that ``load_matrix_file`` then names)."""
    from kernelevolve.sweep.matrix import is_report

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not is_report(data) or not all(isinstance(r, dict) and all(k in r for k in ROW_KEYS) for r in data["rows"]):
        return None
    data.setdefault("source", str(path))
    return data
