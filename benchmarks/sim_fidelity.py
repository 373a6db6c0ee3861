"""Simulator fidelity: simulated vs measured time for tunable variants of kernels across ops.

On a GPU host: every variant is checked and timed on the device (full correctness protocol, interleaved
CUDA-event timing against eager), and simulated with the record of the GPU that is present, in a pool of
CPU processes. Reports Spearman's rank correlation (all points, and within each op, where absolute
times no longer separate the ops) and the median simulated/measured ratio.
Usage: python benchmarks/sim_fidelity.py measure --out DIR [--ops ...]     (GPU host)
       python benchmarks/sim_fidelity.py analyse --measured DIR/measured.jsonl --out DIR   (anywhere)
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernelevolve.operators.tunables import RANGES, find_tunables, rewrite  # noqa: E402

OPS = ROOT / "kernelevolve" / "builtin_specs"
SAMPLES = ROOT / "knowledge_base" / "code_samples"
SIM_OPS = ROOT / "benchmarks" / "sim_ops"
SEEDS = [
    ("swish", OPS / "swish.py", SAMPLES / "swish.py"),
    ("softmax", OPS / "softmax.py", SAMPLES / "softmax.py"),
    ("softmax", OPS / "softmax.py", SAMPLES / "softmax_looped.py"),
    ("conv1d", OPS / "conv1d.py", SAMPLES / "conv1d.py"),
    ("vector_add", SIM_OPS / "vector_add_spec.py", SIM_OPS / "vector_add_kernel.py"),
    ("rmsnorm", SIM_OPS / "rmsnorm_spec.py", SIM_OPS / "rmsnorm_kernel.py"),
    ("matmul", SIM_OPS / "matmul_spec.py", SIM_OPS / "matmul_kernel.py"),
]
# Keep variants inside what these kernels support (conv1d tiles larger than 256 exhaust shared memory).
CAPS = {"conv1d": 256, "matmul": 256}


def variants(source: str, op: str, count: int, rng: random.Random) -> list[tuple[str, dict[str, int]]]:
    """The seed plus up to ``count - 1`` distinct settings of its tunables, each a power-of-two step away."""
    tunables = find_tunables(source)
    choices = []
    for t in tunables:
        lo, hi = RANGES[t.kind]
        hi = min(hi, CAPS.get(op, hi)) if t.kind == "block" else hi
        if t.kind == "stages":
            values = [v for v in (1, 2, 3, 4) if lo <= v <= hi]
        else:
            values = sorted({v for v in (t.value // 4, t.value // 2, t.value, t.value * 2, t.value * 4)
                             if lo <= v <= hi and v > 0})
        choices.append(values)
    combos = [c for c in itertools.product(*choices)]
    rng.shuffle(combos)
    out = [(source, {t.name: t.value for t in tunables})]
    for combo in combos:
        setting = {t.name: v for t, v in zip(tunables, combo, strict=True)}
        if setting == out[0][1]:
            continue
        out.append((rewrite(source, dict(zip(tunables, combo, strict=True))), setting))
        if len(out) >= count:
            break
    return out


def spearman(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3:
        return None

    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        result = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                result[order[k]] = (i + j) / 2.0
            i = j + 1
        return result

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var else None


def simulate_one(spec: Path, candidate: Path, hardware: dict) -> dict:
    """Simulate in a fresh interpreter process (TRITON_INTERPRET must be set before triton loads)."""
    code = ("import json,sys; from evaluators.simulation import simulate; from evaluators.spec import load_spec;"
            "print(json.dumps(simulate(load_spec(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]))))")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, "-c", code, str(spec), str(candidate), json.dumps(hardware)],
                          capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(args: argparse.Namespace) -> None:
    """On the GPU host: check and time every variant; one JSON line per candidate, written as it finishes."""
    import torch

    from interpreters.sandbox import EvaluationWorker
    from interpreters.targets import is_present, load_targets

    target = next(t for t in load_targets().values() if t.needs_device and is_present(t))
    rng = random.Random(0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path("/tmp/ke-fidelity")
    work.mkdir(parents=True, exist_ok=True)
    seeds = [s for s in SEEDS if not args.ops or s[0] in args.ops]
    lines = out / "measured.jsonl"
    with EvaluationWorker({}) as worker, lines.open("a") as sink:
        for op, spec, seed in seeds:
            for i, (source, setting) in enumerate(variants(seed.read_text(), op, args.per_op, rng)):
                path = work / f"{seed.stem}_{i:02d}.py"
                path.write_text(source)
                res = worker.evaluate({"spec_path": str(spec), "candidate_path": str(path), "device": "cuda",
                                       "target": target.name, "timeout_s": 300, "seeds": [0],
                                       "compile_baseline": False, "profile": False})
                row = {"op": op, "spec": str(spec.relative_to(ROOT)), "kernel": path.name, "seed": seed.name,
                       "setting": setting, "source": source, "status": res.status, "reason": res.reason,
                       "measured": {c.name: c.latency_ms for c in res.cases if c.latency_ms},
                       "iqr": {c.name: c.latency_iqr_ms for c in res.cases if c.latency_ms},
                       "gpu": torch.cuda.get_device_name(), "target": target.name, "torch": torch.__version__,
                       "command": "python " + " ".join(shlex.quote(a) for a in sys.argv)}
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                print(f"  {path.name}: {res.status} {res.reason[:80]}", flush=True)


def analyse(args: argparse.Namespace) -> None:
    """Anywhere: simulate every measured candidate with the target's record and compare the rankings."""
    from interpreters.executor import hardware_record
    from interpreters.targets import get_target

    rows = [json.loads(line) for f in args.measured for line in Path(f).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["status"] == "ok"]
    hardware = hardware_record(get_target(args.target or rows[0]["target"]))
    work = Path("/tmp/ke-fidelity-sim")
    work.mkdir(parents=True, exist_ok=True)
    for r in rows:
        (work / r["kernel"]).write_text(r["source"])
    with ThreadPoolExecutor(args.jobs) as pool:
        sims = list(pool.map(lambda r: simulate_one(ROOT / r["spec"], work / r["kernel"], hardware), rows))
    points = []
    for r, sim in zip(rows, sims, strict=True):
        for case, ms in r["measured"].items():
            if case in sim.get("cases", {}):
                row = sim["cases"][case]
                limits = [lc["limit"] for lc in row["launches"]]
                points.append({"op": r["op"], "kernel": r["kernel"], "setting": r["setting"], "case": case,
                               "measured_ms": ms, "simulated_ms": row["candidate_ms"],
                               "limit": limits[0] if limits else ""})
    report = summarise(points, rows, sims, hardware["name"])
    write_report(report, Path(args.out))


def summarise(points: list[dict], rows: list[dict], sims: list[dict], hardware: str) -> dict:
    measured, simulated = [p["measured_ms"] for p in points], [p["simulated_ms"] for p in points]
    per_case = {}
    for key in sorted({(p["op"], p["case"]) for p in points}):
        sel = [p for p in points if (p["op"], p["case"]) == key]
        times = [p["measured_ms"] for p in sel]
        per_case["/".join(key)] = {
            "n": len(sel), "spearman": spearman(times, [p["simulated_ms"] for p in sel]),
            "median_ratio": statistics.median(p["simulated_ms"] / p["measured_ms"] for p in sel),
            "measured_spread": max(times) / min(times)}
    within = [v["spearman"] for v in per_case.values() if v["spearman"] is not None]
    first = rows[0] if rows else {}
    return {
        "benchmark": "sim_fidelity", "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "gpu": first.get("gpu"), "torch_on_gpu": first.get("torch"), "measure_command": first.get("command"),
        "analyse_command": "python " + " ".join(shlex.quote(a) for a in sys.argv), "simulated_as": hardware,
        "candidates": len(rows), "n_points": len(points), "ops": sorted({p["op"] for p in points}),
        "spearman_all": spearman(measured, simulated),
        "spearman_within_case_mean": statistics.fmean(within) if within else None,
        "median_ratio_sim_over_measured": statistics.median(s / m for s, m in zip(simulated, measured, strict=True))
        if points else None,
        "per_case": per_case, "points": points,
        "simulation_errors": [{"kernel": r["kernel"], "error": s.get("error")} for r, s in zip(rows, sims, strict=True)
                              if s.get("error")],
    }


def write_report(report: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "sim_fidelity.json").write_text(json.dumps(report, indent=2, default=str))
    lines = [f"# Simulator fidelity: {report['gpu']} measured vs `{report['simulated_as']}` simulated", "",
             f"Measured ({report['torch_on_gpu']}): `{report['measure_command']}`  ",
             f"Simulated ({report['date']}): `{report['analyse_command']}`", "",
             f"{report['candidates']} correct candidates, {report['n_points']} (candidate, case) points over "
             f"{len(report['ops'])} ops ({', '.join(report['ops'])}).", "",
             f"- Spearman, all points: **{report['spearman_all']:.3f}**",
             f"- Spearman within each (op, case), mean: **{report['spearman_within_case_mean']:.3f}**",
             f"- median simulated/measured: **{report['median_ratio_sim_over_measured']:.2f}**", "",
             "| op/case | n | Spearman | median sim/measured | measured slowest/fastest |", "|---|---|---|---|---|"]
    for key, v in report["per_case"].items():
        rho = f"{v['spearman']:.2f}" if v["spearman"] is not None else "-"
        lines.append(f"| {key} | {v['n']} | {rho} | {v['median_ratio']:.2f} | {v['measured_spread']:.2f}x |")
    (out / "sim_fidelity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def rebuild(args: argparse.Namespace) -> None:
    """Rewrite the report from an earlier analysis's points (no re-simulation)."""
    old = json.loads(Path(args.report).read_text())
    report = summarise(old["points"], [], [], old["simulated_as"])
    for key in ("gpu", "torch_on_gpu", "measure_command", "analyse_command", "candidates", "simulation_errors"):
        report[key] = old[key]
    write_report(report, Path(args.out))


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="on a GPU host: check and time the variants")
    m.add_argument("--out", required=True)
    m.add_argument("--per-op", type=int, default=10)
    m.add_argument("--ops", nargs="*", default=[])
    a = sub.add_parser("analyse", help="simulate measured variants and compare")
    a.add_argument("--measured", nargs="+", required=True)
    a.add_argument("--target", default=None)
    a.add_argument("--out", required=True)
    a.add_argument("--jobs", type=int, default=2)
    r = sub.add_parser("rebuild", help="rewrite the report from an earlier sim_fidelity.json")
    r.add_argument("--report", required=True)
    r.add_argument("--out", required=True)
    args = parser.parse_args()
    {"measure": measure, "analyse": analyse, "rebuild": rebuild}[args.command](args)


if __name__ == "__main__":
    main()
