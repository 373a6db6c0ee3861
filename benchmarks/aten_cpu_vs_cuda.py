"""Where do ATen's CPU and CUDA results differ for suite ops? Runs each op's reference on the same inputs on
both devices (and in float64 on the CPU, where the op accepts it) and prints the largest differences. On a
GPU it also runs the op's lowered draft there (the sweep's: one draft per input structure), so one run shows
whether a GPU-only failure is the kernel's error (far from float64) or ATen's (the kernel is closer to float64
than ATen is).

Why: the ATen sweep judges a kernel against ATen *on its own device*, so a kernel that matches the CPU can
fail on a GPU for reasons in ATen, not in the kernel (see knowledge_base/guidance/aten_numerics_cpu_vs_cuda.md).
Run it on a GPU host before changing a lowering or a tolerance::

    python3 benchmarks/aten_cpu_vs_cuda.py --ops 'native_group_norm*,cumsum*' --out /tmp/cpu_vs_cuda.json

Without a GPU it compares the CPU result with the float64 one only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators.candidate import flatten_outputs, load_candidate_class  # noqa: E402
from evaluators.spec import load_spec  # noqa: E402
from kernelevolve.aten.spec_render import render_spec  # noqa: E402
from kernelevolve.aten.sweep import select_ops  # noqa: E402
from kernelevolve.lowering import lower_spec  # noqa: E402


def _diff(a: torch.Tensor, b: torch.Tensor) -> float | None:
    if a.shape != b.shape or not a.numel():
        return None
    if not (a.is_floating_point() and b.is_floating_point()):
        return float((a.long() != b.long()).sum())  # integer outputs: the number of elements that differ
    finite = torch.isfinite(a.double()) & torch.isfinite(b.double())
    return float((a.double()[finite] - b.double()[finite]).abs().max()) if finite.any() else 0.0


def compare_op(spec_path: Path, cand_path: Path, cuda: bool, seed: int) -> list[dict[str, Any]]:
    spec = load_spec(spec_path)
    ref = spec.reference_cls(*spec.init_args())
    kernel = load_candidate_class(cand_path)(*spec.init_args()).cuda() if cuda else None
    rows = []
    torch.manual_seed(seed)
    for name, args in spec.cases("prod", "cpu").items():
        with torch.no_grad():
            cpu = [t.detach() for t in flatten_outputs(ref(*args))]
            row: dict[str, Any] = {"case": name}
            f64: list[torch.Tensor] = []
            try:
                wide = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
                f64 = flatten_outputs(ref(*wide))
                row["cpu_vs_f64"] = [_diff(c, w) for c, w in zip(cpu, f64, strict=False)]
            except (RuntimeError, TypeError) as exc:  # an op or dtype without a float64 kernel
                row["cpu_vs_f64"] = f"n/a: {str(exc).splitlines()[0][:80]}"
            if cuda:
                dev = [a.cuda() if isinstance(a, torch.Tensor) else a for a in args]
                gpu = [t.cpu() for t in flatten_outputs(ref.cuda()(*dev))]
                row["cuda_vs_cpu"] = [_diff(g, c) for g, c in zip(gpu, cpu, strict=False)]
                mine = [t.cpu() for t in flatten_outputs(kernel(*dev))]
                row["kernel_vs_cuda"] = [_diff(k, g) for k, g in zip(mine, gpu, strict=False)]
                if f64:
                    row["cuda_vs_f64"] = [_diff(g, w) for g, w in zip(gpu, f64, strict=False)]
                    row["kernel_vs_f64"] = [_diff(k, w) for k, w in zip(mine, f64, strict=False)]
                row["dtypes"] = {"cpu": [str(t.dtype) for t in cpu], "cuda": [str(t.dtype) for t in gpu]}
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", required=True, help="comma-separated globs over suite op names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # as the evaluator runs references
    torch.backends.cudnn.allow_tf32 = False
    cuda = torch.cuda.is_available()
    report = {"device": torch.cuda.get_device_name() if cuda else "cpu only", "torch": torch.__version__, "ops": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for op in select_ops(args.ops):
            path, cand = Path(tmp) / f"{op.slug}.py", Path(tmp) / f"cand_{op.slug}.py"
            path.write_text(render_spec(op), encoding="utf-8")
            target = "h100" if cuda else "cpu"  # the GPU form where one runs it (the sweep's draft)
            cand.write_text(lower_spec(path, target, per_structure=True), encoding="utf-8")
            report["ops"][op.name] = compare_op(path, cand, cuda, args.seed)
            for row in report["ops"][op.name]:
                print(op.name, json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
