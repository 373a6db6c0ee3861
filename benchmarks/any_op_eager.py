"""Eager time of every any_op corpus problem at its production size, on one CUDA device.

Checks the corpus's promise that each problem is production-like (an eager forward of ~10 us to ~10 ms on an
H100) and that its reference runs there. References run in IEEE fp32 (TF32 off), as the evaluator runs them.
Run: ``PYTHONPATH=$PWD python3 benchmarks/any_op_eager.py [--out table.md]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

from evaluators.spec import load_spec

CORPUS = Path(__file__).parent / "any_op"


def time_problem(path: Path, reps: int = 20) -> tuple[float, float]:
    """(median eager ms, MB of inputs + outputs) at the production size."""
    spec = load_spec(path)
    torch.manual_seed(0)
    model = spec.reference_cls(*spec.init_args()).cuda().eval()
    inputs = spec.cases("prod", "cuda")["case0"]
    with torch.no_grad():
        out = model(*inputs)
        for _ in range(3):
            model(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    outs = out if isinstance(out, (tuple, list)) else [out]
    mb = sum(t.numel() * t.element_size() for t in [*inputs, *outs] if isinstance(t, torch.Tensor)) / 2**20
    return statistics.median(times), mb


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None, help="also write the table (markdown) here")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = [f"device: {torch.cuda.get_device_name()}", "", "| problem | eager ms | MB in+out |", "|---|---:|---:|"]
    failures = 0
    for path in sorted(CORPUS.glob("level*/*.py")):
        name = f"{path.parent.name}/{path.name}"
        try:
            ms, mb = time_problem(path)
            rows.append(f"| {name} | {ms:.4f} | {mb:.1f} |")
        except Exception as exc:  # report every problem, keep going
            failures += 1
            rows.append(f"| {name} | FAILED: {type(exc).__name__}: {str(exc)[:120]} | |")
        torch.cuda.empty_cache()
        print(rows[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
