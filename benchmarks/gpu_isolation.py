"""Isolation on a real GPU: a candidate that faults the device, hangs a kernel or segfaults costs exactly its
own evaluation; the next candidate on the same worker is evaluated normally, and the worker is never restarted.

  python3 benchmarks/gpu_isolation.py --out benchmarks/results/gpu_isolation_h100
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interpreters.sandbox import EvaluationWorker  # noqa: E402

HERE = ROOT / "benchmarks" / "gpu_isolation"
SPEC = ROOT / "kernelevolve" / "builtin_specs" / "swish.py"
HONEST = ROOT / "knowledge_base" / "code_samples" / "swish.py"
SEQUENCE = [("honest", HONEST), ("illegal_address", HERE / "illegal_address.py"), ("honest", HONEST),
            ("device_hang", HERE / "device_hang.py"), ("honest", HONEST), ("segfault", HERE / "segfault.py"),
            ("honest", HONEST)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True, help="output prefix (.json and .md)")
    args = parser.parse_args()
    import torch
    import triton

    rows = []
    with EvaluationWorker({}) as worker:
        pid = None
        for label, path in SEQUENCE:
            t0 = time.monotonic()
            result = worker.evaluate({"spec_path": str(SPEC), "candidate_path": str(path), "device": "cuda",
                                      "target": "gpu", "timeout_s": 30, "static_checks": label == "honest",
                                      "baseline_cache_dir": tempfile.mkdtemp(), "profile": False})
            worker_pid = worker._proc.pid if worker._proc else None
            rows.append({"candidate": label, "status": result.status, "reason": result.reason[:200],
                         "fitness": round(result.fitness, 3), "seconds": round(time.monotonic() - t0, 1),
                         "worker_pid": worker_pid, "worker_restarts": worker.restarts})
            pid = pid or worker_pid
            print(json.dumps(rows[-1]), flush=True)
    info = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "command": "python3 benchmarks/gpu_isolation.py --out " + args.out, "rows": rows}
    Path(args.out + ".json").write_text(json.dumps(info, indent=1) + "\n")
    lines = [f"# Candidate isolation on {info['gpu']}", "",
             f"{info['date']}, torch {info['torch']}, triton {info['triton']}: `{info['command']}`", "",
             "One evaluation worker, candidates in this order; each bad one must cost only its own evaluation.", "",
             "| # | candidate | status | seconds | worker pid | worker restarts | reason |",
             "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        lines.append(f"| {i} | {r['candidate']} | {r['status']} | {r['seconds']} | {r['worker_pid']} | "
                     f"{r['worker_restarts']} | {r['reason'][:120]} |")
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
