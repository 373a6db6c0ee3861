"""Campaigns: many ops x targets x strategies searched together on the same pools (``ke campaign FILE.toml``).

The file is turned into a *plan*: an ordered list of run entries, each with a slot number. The campaign is
stored under its name with the plan's hash, and every run it creates carries {"campaign": {"id", "slot"}} in
its config (written in the run's own INSERT). Running the same file again therefore resumes the whole
campaign: completed slots are skipped, interrupted ones resume, missing ones are created. A changed plan
under the same name is refused instead of being silently mixed with the old one.

File format::

    name = "nightly"            # required: the campaign's identity in the store
    concurrency = 4             # expansions in flight across all runs (default 1)

    [defaults]                  # any run key; each run may override it
    budget = 20
    strategy = "greedy"

    [[runs]]                    # explicit runs ...
    op = "swish"
    hw = "cpu"

    [matrix]                    # ... and/or a cross product (ops x hw x strategies x seeds)
    ops = ["softmax", "conv1d"]
    hw = ["mtia-v3"]
    strategies = ["greedy", "mcts"]
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evaluators.identity import source_hash
from kernelevolve.errors import UserError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
RUN_KEYS = {"op", "hw", "strategy", "budget", "seed", "simulate", "drafts", "timeout", "time_limit", "reuse"}
TOP_KEYS = {"name", "concurrency", "executor", "ray_address", "defaults", "runs", "matrix"}
MATRIX_KEYS = {"ops": "op", "hw": "hw", "strategies": "strategy", "seeds": "seed"}
DEFAULTS: dict[str, Any] = {"strategy": "greedy", "budget": 12, "seed": 0, "simulate": False, "drafts": 3,
                            "timeout": 120.0, "time_limit": None, "reuse": True}


@dataclass(frozen=True)
class PlannedRun:
    slot: int
    op: str
    hw: str
    strategy: str
    budget: int
    seed: int
    simulate: bool
    drafts: int
    timeout: float
    time_limit: float | None
    reuse: bool

    @property
    def label(self) -> str:
        return f"{self.op}@{self.hw}{' (sim)' if self.simulate else ''} {self.strategy} seed {self.seed}"


@dataclass
class CampaignPlan:
    name: str
    concurrency: int
    executor: str | None
    ray_address: str | None
    runs: list[PlannedRun]

    @property
    def plan_hash(self) -> str:
        """What identifies the work (not how it is executed): changing it under one name is refused."""
        return source_hash(json.dumps([asdict(r) for r in self.runs], sort_keys=True))


def _check_keys(where: str, table: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")


def load_plan(path: Path) -> CampaignPlan:
    """Parse and validate a campaign file; every problem is one line naming the file and the entry."""
    from kernelevolve.inputs import text_file

    path, text = text_file(path, "campaign file")  # missing, a directory, binary, empty, a bad name
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None
    _check_keys(str(path), data, TOP_KEYS)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{path}: needs name = \"...\" (the campaign's identity; re-running the file resumes it)")
    defaults = {**DEFAULTS, **_table(path, data, "defaults")}
    _check_keys(f"{path} [defaults]", defaults, RUN_KEYS)
    entries = [{**defaults, **_run_table(path, i, r)} for i, r in enumerate(_list(path, data, "runs"))]
    matrix = _table(path, data, "matrix")
    _check_keys(f"{path} [matrix]", matrix, set(MATRIX_KEYS))
    if matrix:
        axes = {MATRIX_KEYS[k]: v if isinstance(v, list) else [v] for k, v in matrix.items()}
        for key in ("op", "hw"):
            if key not in axes:
                raise UserError(f"{path} [matrix]: needs '{'ops' if key == 'op' else key}'")
        names = list(axes)
        for combo in itertools.product(*axes.values()):
            entries.append({**defaults, **dict(zip(names, combo, strict=True))})
    if not entries:
        raise UserError(f"{path}: no runs (add [[runs]] entries or a [matrix])")
    concurrency = data.get("concurrency", 1)
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise UserError(f"{path}: concurrency must be a positive integer, got {concurrency!r}")
    return build_plan(str(path), name.strip(), entries, concurrency, data.get("executor"), data.get("ray_address"))


def build_plan(where: str, name: str, entries: list[dict[str, Any]], concurrency: int = 1,
               executor: str | None = None, ray_address: str | None = None) -> CampaignPlan:
    """A plan from run entries (DEFAULTS fill what an entry leaves out), each checked: what a campaign file and
    ``ke sweep`` (which plans from a folder of problems, not a file) share, so both resume the same way."""
    runs = [_planned(where, slot, {**DEFAULTS, **entry}) for slot, entry in enumerate(entries)]
    return CampaignPlan(name, concurrency, executor, ray_address, runs)


def _table(path: Path, data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise UserError(f"{path}: [{key}] must be a table")
    return value


def _list(path: Path, data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise UserError(f"{path}: {key} must be an array of tables ([[{key}]])")
    return value


def _run_table(path: Path, index: int, entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise UserError(f"{path}: runs[{index}] must be a table")
    _check_keys(f"{path} runs[{index}]", entry, RUN_KEYS)
    return entry


def _planned(path: str, slot: int, entry: dict[str, Any]) -> PlannedRun:
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.builtin_specs import resolve_op
    from search.policy import STRATEGIES

    where = f"{path} run {slot} ({entry.get('op')}@{entry.get('hw')})"
    for key in ("op", "hw"):
        if not isinstance(entry.get(key), str):
            raise UserError(f"{where}: needs {key} = \"...\"")
    try:
        resolve_op(entry["op"])
        get_target(entry["hw"])
    except (FileNotFoundError, UserError) as exc:  # UserError: a spec path that is not usable source
        raise UserError(f"{where}: {exc}") from None
    except UnknownTarget as exc:
        raise UserError(f"{where}: {exc.args[0]}") from None
    if entry["strategy"] not in STRATEGIES:
        raise UserError(f"{where}: unknown strategy '{entry['strategy']}' (known: {', '.join(STRATEGIES)})")
    for key in ("budget", "drafts", "seed"):
        value = entry[key]
        if not isinstance(value, int) or isinstance(value, bool) or (value < 1 and key != "seed"):
            raise UserError(f"{where}: {key} must be a {'' if key == 'seed' else 'positive '}integer, got {value!r}")
    return PlannedRun(slot=slot, op=entry["op"], hw=entry["hw"], strategy=entry["strategy"], budget=entry["budget"],
                      seed=entry["seed"], simulate=bool(entry["simulate"]), drafts=entry["drafts"],
                      timeout=float(entry["timeout"]), time_limit=entry["time_limit"], reuse=bool(entry["reuse"]))
