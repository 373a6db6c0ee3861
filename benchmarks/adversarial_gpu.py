"""The adversarial corpus on a GPU: every file of ``tests/adversarial/candidates`` through ``ke eval`` at
production sizes, the verdict and reason of each against the one its header expects there.

Why a separate run: on the CPU target nothing is timed, so the cheats that only pay when timed (a result
remembered across timed calls, work moved out of the timed window) can only be seen failing on a device.
Each file runs as its own ``ke eval`` process, exactly as a user would run it; ``--jobs`` run at once (they
share one state folder, so each case's ``torch.compile`` baseline is measured once). Verdicts, not speeds,
are the result here: timings of jobs that shared the GPU are not comparable with anything.

Run (repo root, GPU host): ``python3 benchmarks/adversarial_gpu.py --jobs 8 --out
benchmarks/results/adversarial_h100``; ``--only 'output_caching__*'`` picks files.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import fnmatch
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.adversarial.corpus import CASES, Case  # noqa: E402


def evaluate(case: Case, hw: str, state_dir: str, timeout_s: float) -> dict:
    """One ``ke eval`` of one corpus file; the row of the matrix."""
    cmd = [sys.executable, "-m", "kernelevolve.cli.main", "eval", "--op", str(case.spec_path), "--hw", hw,
           str(case.path), "--json", "--timeout", str(timeout_s)]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "KE_STATE_DIR": state_dir},
                          cwd=ROOT, timeout=20 * timeout_s)
    expect, reason = (case.expect, case.reason) if hw == "cpu" else (case.gpu_expect, case.gpu_reason)
    row = {"file": case.path.stem, "class": case.cls, "op": case.op, "expect": expect, "expect_reason": reason,
           "seconds": round(time.monotonic() - started, 1), "rc": proc.returncode}
    try:
        result = json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        row.update(status="harness_error", reason=" ".join(proc.stderr.split())[-300:])
    else:
        row.update(status=result["status"], reason=result.get("reason", ""), fitness=result.get("fitness"),
                   speedup_vs_eager=result.get("speedup_vs_eager"),
                   speedup_vs_compile=result.get("speedup_vs_compile"),
                   timed_checks=(result.get("extra") or {}).get("timed_checks"),
                   fresh_inputs=(result.get("extra") or {}).get("fresh_inputs"))
    row["as_expected"] = row["status"] == expect and reason in row["reason"]
    return row


def markdown(meta: dict, rows: list[dict]) -> str:
    cheats = [r for r in rows if r["class"] not in ("honest", "sandbox")]
    honest = [r for r in rows if r["class"] == "honest"]
    lines = [f"# Adversarial corpus on {meta['gpu']}", "",
             f"{meta['date']}, torch {meta['torch']}, triton {meta['triton']}, commit {meta['commit']}.", "",
             f"Command: `{meta['command']}`", "",
             f"- cheats rejected: **{sum(r['status'] != 'ok' for r in cheats)}/{len(cheats)}**",
             f"- honest kernels accepted: **{sum(r['status'] == 'ok' for r in honest)}/{len(honest)}**",
             f"- verdict and reason as the header expects: {sum(r['as_expected'] for r in rows)}/{len(rows)}",
             "", "Fitness and speedups of jobs that shared the GPU (`--jobs`) are shown for the honest kernels "
             "only as a sign that they were timed, not as measurements.", "",
             "| file | op | expected | got | reason | timed checks |", "|---|---|---|---|---|---|"]
    for r in rows:
        mark = "" if r["as_expected"] else " **(unexpected)**"
        reason = r["reason"].replace("|", "\\|")[:160]
        checks = sum((r.get("timed_checks") or {}).values()) if r.get("timed_checks") else ""
        lines.append(f"| `{r['file']}` | {r['op']} | {r['expect']} | {r['status']}{mark} | {reason} | {checks} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hw", default=None, help="target (default: the GPU present, h100 or h200)")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=120.0, help="ke eval's per-phase timeout")
    parser.add_argument("--only", default="*", help="glob over file stems")
    parser.add_argument("--out", required=True, help="output path without suffix (.json and .md are written)")
    args = parser.parse_args()
    import torch
    import triton

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu (Triton's interpreter)"
    hw = args.hw or ("h200" if "H200" in gpu else "h100")
    cases = [c for c in CASES if fnmatch.fnmatch(c.path.stem, args.only)]
    # KE_COMMIT from the caller: a device's copy of the tree can carry a stale git HEAD
    git_head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    commit = os.environ.get("KE_COMMIT") or git_head.stdout.strip() or "unknown"
    meta = {"gpu": gpu, "hw": hw, "torch": torch.__version__, "triton": triton.__version__,
            "date": datetime.date.today().isoformat(), "commit": commit, "host": platform.node(),
            "command": "python3 benchmarks/adversarial_gpu.py " + " ".join(sys.argv[1:])}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ke-adv-") as state, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(evaluate, c, hw, state, args.timeout): c for c in cases}
        for future in concurrent.futures.as_completed(futures):
            row = future.result()
            rows.append(row)
            print(f"{row['file']:55s} {row['status']:14s} {'ok' if row['as_expected'] else 'UNEXPECTED'} "
                  f"{row['reason'][:90]}", flush=True)
    rows.sort(key=lambda r: r["file"])
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    out.with_suffix(".md").write_text(markdown(meta, rows))
    bad = [r["file"] for r in rows if not r["as_expected"]]
    print(f"{len(rows) - len(bad)}/{len(rows)} as expected" + (f"; unexpected: {', '.join(bad)}" if bad else ""))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
