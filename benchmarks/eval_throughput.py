"""Evaluation throughput: nodes per minute of a real `ke search`, and where each node's time goes.

Runs `ke search --op OP --hw HW --strategy greedy --executor local --no-reuse` in a fresh state directory,
then reads every node's stored evaluation JSON. The rate is counted as the issue defines it: nodes over the
span from the first node's evaluation start to the last node's end (the final re-measurement of winners and
process start-up are reported apart, as `final_s` and `wall_s`).

  python3 benchmarks/eval_throughput.py --op softmax --budget 120 --concurrency 8 --out /tmp/tp.json
  python3 benchmarks/eval_throughput.py --summarize before.json after.json \
      --write benchmarks/results/eval_throughput_h100

A node's phases come from `extra.phases` of its evaluation (seconds per phase; evaluations made before the
breakdown existed have only their total `eval_seconds`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _gpu_target() -> str:
    sys.path.insert(0, str(ROOT))
    from interpreters.targets import is_present, load_targets

    return next(t.name for t in load_targets().values() if t.needs_device and is_present(t))


def _versions() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        import torch
        import triton

        info.update(torch=torch.__version__, triton=triton.__version__)
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name()
            info["gpu_count"] = str(torch.cuda.device_count())
    except ImportError:
        pass
    if os.environ.get("KE_COMMIT"):  # a device copy of the working tree may carry a stale HEAD
        info["commit"] = os.environ["KE_COMMIT"]
        return info
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                        text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def _node_records(artifacts: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(artifacts.glob("runs/*/nodes/*/evaluation.json")):
        data = json.loads(path.read_text())
        extra = data.get("extra") or {}
        end = extra.get("ended_at") or path.stat().st_mtime
        start = extra.get("started_at") or end - float(data.get("eval_seconds") or 0.0)
        rows.append({"node": int(path.parent.name), "status": data["status"], "fitness": data.get("fitness"),
                     "reason": (data.get("reason") or "")[:300],
                     "eval_seconds": data.get("eval_seconds"), "start": start, "end": end,
                     "screened": bool(extra.get("screened")), "phases": extra.get("phases") or {}})
    return rows


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return {"median": round(statistics.median(values), 3), "p25": round(q[0], 3), "p75": round(q[2], 3),
            "mean": round(statistics.fmean(values), 3)}


class HostSampler:
    """Busy fraction of all the host's cores (from /proc/stat, every ``interval`` s) while a search runs, so a
    run can say whether its host-side phases were starved of CPU."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval, self.samples = interval, []  # (time, busy fraction of the interval)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @staticmethod
    def _ticks() -> tuple[int, int] | None:
        try:
            fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields), idle

    def _loop(self) -> None:
        last = self._ticks()
        while not self._stop.wait(self.interval):
            now = self._ticks()
            if now is None or last is None or now[0] == last[0]:
                continue
            self.samples.append((time.time(), 1 - (now[1] - last[1]) / (now[0] - last[0])))
            last = now

    def __enter__(self) -> HostSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def busy_between(self, start: float, end: float) -> dict[str, float]:
        values = [busy for at, busy in self.samples if start <= at <= end]
        return {**_spread(values), "cores": os.cpu_count() or 0} if values else {}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    hw = args.hw or _gpu_target()
    state = Path(args.state_dir or tempfile.mkdtemp(prefix="ke-throughput-"))
    env = {**os.environ, "KE_STATE_DIR": str(state), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "kernelevolve.cli.main", "search", "--op", args.op, "--hw", hw,
               "--strategy", "greedy", "--budget", str(args.budget), "--concurrency", str(args.concurrency),
               "--executor", "local", "--no-reuse", "--json", *args.extra]
    started = time.time()
    with HostSampler() as sampler:
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.time() - started
    if proc.returncode != 0:
        raise SystemExit(f"search failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    summary = json.loads(proc.stdout)
    rows = _node_records(state / "artifacts")
    span = max(r["end"] for r in rows) - min(r["start"] for r in rows)
    phases: dict[str, list[float]] = {}
    for row in rows:
        for key, value in row["phases"].items():
            phases.setdefault(key, []).append(float(value))
    statuses: dict[str, int] = {}
    for row in rows:
        statuses[row["status"]] = statuses.get(row["status"], 0) + 1
    return {
        "label": args.label, "gpu_lock": os.environ.get("KE_GPU_LOCK", "phases"), "op": args.op, "hw": hw,
        "budget": args.budget, "concurrency": args.concurrency,
        "command": " ".join(command[1:]), "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": _versions(), "nodes": len(rows), "statuses": statuses,
        "screened": sum(r["screened"] for r in rows),
        "span_s": round(span, 2), "nodes_per_minute": round(60 * len(rows) / span, 2),
        "wall_s": round(wall, 2), "final_s": round(max(0.0, started + wall - max(r["end"] for r in rows)), 2),
        "eval_seconds": _spread([float(r["eval_seconds"] or 0) for r in rows]),
        "phases": {k: _spread(v) for k, v in sorted(phases.items())},
        "host_cpu_busy": sampler.busy_between(min(r["start"] for r in rows), max(r["end"] for r in rows)),
        "best_fitness": (summary.get("best") or {}).get("fitness"), "run_id": summary.get("run_id"),
        "nodes_detail": rows,
    }


def summarize(paths: list[str], prefix: str) -> None:
    results = []
    for path in paths:  # one run's JSON, or an earlier summary's list of runs
        data = json.loads(Path(path).read_text())
        results += data if isinstance(data, list) else [data]
    Path(prefix + ".json").write_text(json.dumps(results, indent=1) + "\n")
    lines = ["# Evaluation throughput", "",
             "Nodes per minute of `ke search --strategy greedy --executor local --no-reuse`, counted from the first "
             "node's evaluation start to the last node's end. Phase columns are medians over nodes (seconds).", "",
             "| label | GPU | GPUs | commit | op | nodes | conc. | nodes/min | eval s (median) | screened | "
             "host CPU busy (median) | statuses |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        v, busy = r.get("versions", {}), r.get("host_cpu_busy") or {}
        cpu = f"{busy['median']:.0%} of {busy['cores']}" if busy else "-"
        lines.append(f"| {r['label']} | {v.get('gpu', r['hw'])} | {v.get('gpu_count', '')} | {v.get('commit', '')} | "
                     f"{r['op']} | {r['nodes']} | {r['concurrency']} | **{r['nodes_per_minute']}** | "
                     f"{r['eval_seconds'].get('median')} | {r.get('screened', 0)} | {cpu} | {r['statuses']} |")
    keys = sorted({k for r in results for k in r["phases"]})
    if keys:
        lines += ["", "Per-phase medians (seconds per node; p25-p75 in brackets):", "",
                  "| label | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
        for r in results:
            cells = []
            for k in keys:
                p = r["phases"].get(k)
                cells.append(f"{p['median']} ({p['p25']}-{p['p75']})" if p else "-")
            lines.append(f"| {r['label']} | " + " | ".join(cells) + " |")
    lines += ["", "Commands and versions:", ""]
    for r in results:
        v = r.get("versions", {})
        lines.append(f"- {r['label']}: {r['date']}, torch {v.get('torch')}, triton {v.get('triton')}: "
                     f"`python3 {r['command']}`")
    Path(prefix + ".md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--op", default="softmax")
    parser.add_argument("--hw", default=None, help="target (default: the first GPU target present)")
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--label", default="run")
    parser.add_argument("--state-dir", default=None)
    parser.add_argument("--out", default=None, help="write the result JSON here")
    parser.add_argument("--summarize", nargs="*", default=None, help="result JSONs to merge")
    parser.add_argument("--write", default=None, help="with --summarize: output prefix for .json and .md")
    parser.add_argument("extra", nargs="*", help="more `ke search` arguments (after --)")
    args = parser.parse_args()
    if args.summarize is not None:
        summarize(args.summarize, args.write or "eval_throughput")
        return
    result = measure(args)
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    brief = {k: v for k, v in result.items() if k != "nodes_detail"}
    print(json.dumps(brief, indent=1))


if __name__ == "__main__":
    main()
