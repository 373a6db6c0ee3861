"""Two versions of the same lowered drafts, timed by ``ke eval`` on one GPU each, interleaved.

Why: a change to a lowering template (a guarded load, a new loop order) changes every draft that uses it,
and its cost can only be seen on the device. Each problem's two drafts run back to back, in the order
A B, then B A in the next round, so drift of the card (clocks, temperature) falls on both; the ratio is of
medians over rounds, with the spread of the per-round ratios. The verdicts are kept too: a draft that fails
correctness is a row of its own, never a time.

Drafts are files ``<level>__<problem>__<variant>.py`` in one folder: written by ``lower_spec`` at two
commits, or by ``--lower`` (the offline operator's two drafts of each problem, ``plain`` and ``guarded``).
Problems are read from a KernelBench folder. With several GPUs, problems are dealt round-robin,
one ``ke eval`` at a time per GPU.

Run (repo root, GPU host): ``python3 benchmarks/draft_ab.py --lower 'level1/82_*,level3/22_*' --drafts /tmp/ab
--kb .kb --variants plain,guarded --rounds 2 --out benchmarks/results/guard_flag_ab_h200``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def problems(drafts: Path, variants: list[str]) -> list[str]:
    """Problems with a draft in every variant (``level1__43_Max_Pooling_3D``)."""
    names = {p.stem.rsplit("__", 1)[0] for p in drafts.glob("*__*.py")}
    return sorted(n for n in names if all((drafts / f"{n}__{v}.py").is_file() for v in variants))


def write_offline_drafts(kb: Path, globs: str, drafts: Path, hw: str) -> None:
    """Each matching problem's offline drafts (``lowered_samples``: the plain lowering, and where it has
    ``*_GUARD`` flags the guarded one) as ``<level>__<problem>__plain.py`` / ``__guarded.py``."""
    import fnmatch

    from kernelevolve.operators.offline import lowered_samples

    drafts.mkdir(parents=True, exist_ok=True)
    for path in sorted(kb.glob("level*/*.py")):
        key = f"{path.parent.name}/{path.stem}"
        if not any(fnmatch.fnmatch(key, g) for g in globs.split(",")):
            continue
        for tag, sample in zip(("plain", "guarded"), lowered_samples(path.stem, path.read_text(), hw), strict=False):
            (drafts / f"{path.parent.name}__{path.stem}__{tag}.py").write_text(sample.source, encoding="utf-8")


def evaluate(draft: Path, spec: Path, hw: str, state_dir: str, gpu: str, timeout_s: float) -> dict:
    cmd = [sys.executable, "-m", "kernelevolve.cli.main", "--state-dir", state_dir, "eval", str(draft),
           "--op", str(spec), "--hw", hw, "--json", "--timeout", str(timeout_s)]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": gpu},
                          timeout=4 * timeout_s)
    try:
        verdict = json.loads(proc.stdout)
    except json.JSONDecodeError:
        verdict = {"status": "no_verdict", "reason": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    cases = verdict.get("cases") or [{}]
    return {"status": verdict.get("status"), "reason": verdict.get("reason", "")[:300],
            "latency_ms": sum(c.get("latency_ms") or 0.0 for c in cases) or None,
            "iqr_ms": max((c.get("latency_iqr_ms") or 0.0) for c in cases),
            "compile_ms": sum(c.get("compile_ms") or 0.0 for c in cases) or None,
            "gpu_info": (verdict.get("extra") or {}).get("gpu", {}), "wall_s": round(time.monotonic() - started, 1),
            "top_kernels": sorted(((verdict.get("extra") or {}).get("profile") or {}).get("kernels") or [],
                                  key=lambda k: -(k.get("us_per_call") or 0))[:6]}


def run_problem(name: str, args: argparse.Namespace, gpu: str) -> list[dict]:
    level, problem = name.split("__", 1)
    spec = Path(args.kb) / level / f"{problem}.py"
    rows = []
    for rnd in range(args.rounds):
        order = args.variants if rnd % 2 == 0 else args.variants[::-1]
        for variant in order:
            row = evaluate(Path(args.drafts) / f"{name}__{variant}.py", spec, args.hw, f"/tmp/ab_state_{gpu}", gpu,
                           args.timeout)
            rows.append({"problem": f"{level}/{problem}", "variant": variant, "round": rnd + 1, "gpu": gpu, **row})
            with open(f"{args.out}.rows.jsonl", "a", encoding="utf-8") as log:  # kept if the run is cut short
                log.write(json.dumps(rows[-1]) + "\n")
            print(f"[gpu {gpu}] {level}/{problem} r{rnd + 1} {variant}: {row['status']} {row['latency_ms']}",
                  flush=True)
    return rows


def summarise(rows: list[dict], variants: list[str]) -> list[dict]:
    """Per problem: each variant's median latency and verdicts, the B/A ratio and its per-round spread."""
    base, other = variants
    out = []
    for problem in sorted({r["problem"] for r in rows}):
        mine = [r for r in rows if r["problem"] == problem]
        entry: dict = {"problem": problem}
        for v in variants:
            times = [r["latency_ms"] for r in mine if r["variant"] == v and r["status"] == "ok" and r["latency_ms"]]
            entry[v] = {"statuses": [r["status"] for r in mine if r["variant"] == v],
                        "median_ms": statistics.median(times) if times else None}
        per_round = []
        for rnd in sorted({r["round"] for r in mine}):
            t = {r["variant"]: r["latency_ms"] for r in mine if r["round"] == rnd and r["status"] == "ok"}
            if t.get(base) and t.get(other):
                per_round.append(t[other] / t[base])
        if entry[base]["median_ms"] and entry[other]["median_ms"]:
            entry["ratio"] = entry[other]["median_ms"] / entry[base]["median_ms"]
            entry["ratio_spread"] = [min(per_round), max(per_round)] if per_round else None
        out.append(entry)
    return out


def markdown(meta: dict, summary: list[dict], variants: list[str]) -> str:
    base, other = variants
    lines = [f"# Draft A/B: {base} vs {other} on {meta['gpu']}", "",
             f"{meta['date']}, torch {meta['torch']}, triton {meta['triton']}.", "", f"Command: `{meta['command']}`",
             "", f"Latency: median over rounds of `ke eval`'s per-case median (summed over cases). Ratio: {other} / "
             f"{base} (above 1: {other} is slower), with the range of the per-round ratios.", "",
             f"| problem | {base} | {other} | {base} ms | {other} ms | ratio | per-round range |",
             "|---|---|---|---|---|---|---|"]
    for e in summary:
        spread = e.get("ratio_spread")
        lines.append(f"| {e['problem']} | {' '.join(e[base]['statuses'])} | {' '.join(e[other]['statuses'])} | "
                     f"{_fmt(e[base]['median_ms'])} | {_fmt(e[other]['median_ms'])} | {_fmt(e.get('ratio'), 3)} | "
                     f"{f'{spread[0]:.3f}-{spread[1]:.3f}' if spread else '-'} |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drafts", required=True)
    parser.add_argument("--kb", required=True, help="KernelBench folder (level1/, level2/, level3/)")
    parser.add_argument("--variants", default="old,new", help="two variant tags, the baseline first")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hw", default=None, help="target (default: the GPU present, h100 or h200)")
    parser.add_argument("--gpus", default="0", help="comma-separated device indices, one ke eval at a time each")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--out", required=True, help="output path without suffix (.json and .md are written)")
    parser.add_argument("--lower", default="", help="globs over 'levelN/stem': first write those problems' offline "
                        "drafts into --drafts (variants plain,guarded)")
    args = parser.parse_args()
    args.variants = args.variants.split(",")
    import torch
    import triton

    gpu_name = torch.cuda.get_device_name(0)
    args.hw = args.hw or ("h200" if "H200" in gpu_name else "h100")
    if args.lower:
        write_offline_drafts(Path(args.kb), args.lower, Path(args.drafts), args.hw)
    names, gpus = problems(Path(args.drafts), args.variants), args.gpus.split(",")
    with concurrent.futures.ThreadPoolExecutor(len(gpus)) as pool:
        shares = [pool.submit(lambda g=g, i=i: [r for n in names[i::len(gpus)] for r in run_problem(n, args, g)])
                  for i, g in enumerate(gpus)]
        rows = [r for s in shares for r in s.result()]
    meta = {"gpu": gpu_name, "hw": args.hw, "torch": torch.__version__, "triton": triton.__version__,
            "date": datetime.date.today().isoformat(), "commit": os.environ.get("KE_COMMIT", "?"),
            "command": "python3 " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])}
    summary = summarise(rows, args.variants)
    Path(args.out).with_suffix(".json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows},
                                                              indent=1))
    Path(args.out).with_suffix(".md").write_text(markdown(meta, summary, args.variants))
    print(markdown(meta, summary, args.variants))


if __name__ == "__main__":
    main()
