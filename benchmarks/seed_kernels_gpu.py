"""Seed kernels of the built-in ops on a real GPU: correctness on production cases, then interleaved
timing against eager and torch.compile, twice per kernel so the noise floor is visible.

Imports only evaluators/interpreters (torch, triton, numpy, stdlib), so it runs on a bare GPU image.
Usage: python benchmarks/seed_kernels_gpu.py [--target auto|h100|h200] --out DIR
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from evaluators.spec import load_spec  # noqa: E402
from interpreters.sandbox import EvaluationWorker  # noqa: E402
from interpreters.targets import get_target  # noqa: E402

KERNELS = [("swish", "swish.py"), ("softmax", "softmax.py"), ("softmax", "softmax_looped.py"),
           ("conv1d", "conv1d.py")]


def copy_bandwidth_gbps() -> float:
    """Measured device-to-device copy rate (bytes read + written), the practical memory ceiling."""
    n = 1 << 30
    src, dst = torch.empty(n, dtype=torch.uint8, device="cuda"), torch.empty(n, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return 2 * n / (statistics.median(times) * 1e-3) / 1e9


def detect_target():
    from interpreters.targets import is_present, load_targets

    present = [t for t in load_targets().values() if t.needs_device and is_present(t)]
    if not present:
        raise SystemExit("no known GPU target is present on this host")
    return present[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="auto", help="a target name, or auto: the present NVIDIA/AMD target")
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    target = detect_target() if args.target == "auto" else get_target(args.target)
    measured_bw = copy_bandwidth_gbps()
    rows, evaluations = [], []
    with EvaluationWorker({}) as worker:
        for op, sample in KERNELS:
            spec_path = ROOT / "kernelevolve" / "builtin_specs" / f"{op}.py"
            cand = ROOT / "knowledge_base" / "code_samples" / sample
            job = {"spec_path": str(spec_path), "candidate_path": str(cand), "device": "cuda",
                   "target": target.name, "timeout_s": args.timeout}
            first, second = worker.evaluate(job), worker.evaluate(job)
            evaluations.append({"op": op, "sample": sample, "runs": [first.to_dict(), second.to_dict()]})
            print(f"{op}/{sample}: {first.status} {first.reason}", flush=True)
            if first.status != "ok" or second.status != "ok":
                rows.append({"op": op, "sample": sample, "status": first.status, "reason": first.reason})
                continue
            spec = load_spec(spec_path)
            torch.manual_seed(0)
            cases = spec.cases("prod", "cpu")
            again = {c.name: c for c in second.cases}
            for case in first.cases:
                nbytes = spec.bytes(cases[case.name])
                floor_rated = nbytes / (target.dram_bandwidth_gbps * 1e9) * 1e3 if nbytes else None
                floor_measured = nbytes / (measured_bw * 1e9) * 1e3 if nbytes else None
                rows.append({
                    "op": op, "sample": sample, "case": case.name, "status": "ok",
                    "candidate_ms": case.latency_ms, "candidate_iqr_ms": case.latency_iqr_ms,
                    "candidate_ms_repeat": again[case.name].latency_ms,
                    "repeat_ratio": again[case.name].latency_ms / case.latency_ms,
                    "eager_ms": case.eager_ms, "compile_ms": case.compile_ms,
                    "speedup_vs_eager": case.eager_ms / case.latency_ms,
                    "speedup_vs_compile": case.compile_ms / case.latency_ms if case.compile_ms else None,
                    "bytes": nbytes, "flops": spec.flops(cases[case.name]),
                    "floor_ms_rated_bw": floor_rated, "floor_ms_measured_bw": floor_measured,
                    "fraction_of_floor": floor_measured / case.latency_ms if floor_measured else None,
                    "max_abs_err": case.max_abs_err,
                })
    gpu = next((e["runs"][0].get("extra", {}).get("gpu") for e in evaluations if e["runs"][0].get("extra")), {})
    report = {
        "benchmark": "seed_kernels_gpu", "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv), "target": target.name,
        "gpu": gpu, "torch": torch.__version__, "measured_copy_bandwidth_gbps": measured_bw,
        "rated_bandwidth_gbps": target.dram_bandwidth_gbps, "rows": rows, "evaluations": evaluations,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "seed_kernels_gpu.json").write_text(json.dumps(report, indent=2, default=str))
    (out / "seed_kernels_gpu.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report: dict) -> str:
    gpu = report["gpu"]
    lines = [
        f"# Seed kernels on {gpu.get('name', '?')} ({report['date']})", "",
        f"torch {report['torch']}, triton {gpu.get('triton', '?')}, driver {gpu.get('driver_version', '?')}, "
        f"SM clock {gpu.get('clocks.sm', '?')} (max {gpu.get('clocks.max.sm', '?')}).",
        f"Command: `{report['command']}`", "",
        f"Memory floor = minimal bytes / measured copy bandwidth ({report['measured_copy_bandwidth_gbps']:.0f} GB/s; "
        f"rated {report['rated_bandwidth_gbps']:.0f} GB/s). Times are medians of interleaved CUDA-event samples "
        "with an L2 flush before each; `repeat` is the same kernel evaluated again in a second session.", "",
        "| op | kernel | case | kernel ms (IQR) | repeat ms | eager ms | compile ms | vs eager | vs compile "
        "| floor ms | of floor |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        if r["status"] != "ok":
            lines.append(f"| {r['op']} | {r['sample']} | - | {r['status']}: {r['reason'][:60]} |||||||| |")
            continue
        vs_compile = f"{r['speedup_vs_compile']:.2f}x" if r["speedup_vs_compile"] else "-"
        lines.append(
            f"| {r['op']} | {r['sample']} | {r['case']} | {r['candidate_ms']:.4f} ({r['candidate_iqr_ms']:.4f}) | "
            f"{r['candidate_ms_repeat']:.4f} | {r['eager_ms']:.4f} | {r['compile_ms']:.4f} | "
            f"{r['speedup_vs_eager']:.2f}x | {vs_compile} | {r['floor_ms_measured_bw']:.4f} | "
            f"{r['fraction_of_floor']:.0%} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
