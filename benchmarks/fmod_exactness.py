"""Is the lowering's ``_fmod`` exact? Counts elements where it differs from ``torch.fmod`` (bitwise, NaN equal to
NaN, and the sign of a zero), for the suite's fmod inputs (a = 10 * N(0, 1), |b| in [0.5, 2.5)) and a dozen
special values (signed zeros, inf, NaN, b = 0, and one |a/b| = 3e36, outside the exact range |a/b| < 2^24);
and for fmod.Scalar's ``x % 3`` (Triton's fp32 '%' by a constant) against the helper on the same ``a``.

Why a script and not only the sweep: the H200 sweep's fmod failure was rare (tens of elements in 67M), so a
fix needs many more elements than one correctness check draws, and the old helper (Triton's float ``%`` in
fp64) side by side, run on the same inputs::

    python3 benchmarks/fmod_exactness.py --n 16777216 --seeds 4 --out /tmp/fmod.json

On a CPU it runs the same kernels through Triton's interpreter (use a small ``--n``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelevolve.lowering.mathlib import HELPERS  # noqa: E402

_KERNELS = '''
import triton
import triton.language as tl
{fmod}

@triton.jit
def _fmod_fp64_percent(a, b):
    return (a.to(tl.float64) % b.to(tl.float64)).to(tl.float32)


@triton.jit
def fmod_kernel(a_ptr, b_ptr, o_ptr, n, OLD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1.0)
    b = tl.load(b_ptr + offs, mask=m, other=1.0)
    if OLD:
        tl.store(o_ptr + offs, _fmod_fp64_percent(a, b), mask=m)
    else:
        tl.store(o_ptr + offs, _fmod(a, b, True), mask=m)


@triton.jit
def fmod3_kernel(a_ptr, o_ptr, n, PERCENT: tl.constexpr, BLOCK: tl.constexpr):
    # fmod.Scalar(x, 3): Triton's fp32 '%' by a constant, or the helper
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1.0)
    if PERCENT:
        tl.store(o_ptr + offs, a % 3.0, mask=m)
    else:
        tl.store(o_ptr + offs, _fmod(a, tl.full(a.shape, 3.0, tl.float32), True), mask=m)
'''
_SPECIAL_A = [0.0, -0.0, 5.0, -5.0, float("inf"), 3.0, -3.0, float("nan"), 7.5, -4.0, 1e30, 3e-30]
_SPECIAL_B = [1.0, 1.0, 0.0, float("inf"), 2.0, float("-inf"), 1.5, 1.0, 2.5, 2.0, 3e-7, 7e-31]


def _load_kernels(folder: Path):
    path = folder / "fmod_kernels.py"
    path.write_text(_KERNELS.format(fmod=HELPERS["_fmod"]), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("fmod_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mismatches(kernels, a: torch.Tensor, b: torch.Tensor, old: bool) -> int:
    out = torch.empty_like(a)
    kernels.fmod_kernel[((a.numel() + 1023) // 1024,)](a, b, out, a.numel(), OLD=old, BLOCK=1024)
    return _count(out, torch.fmod(a, b))


def mismatches_by_3(kernels, a: torch.Tensor, percent: bool) -> int:
    out = torch.empty_like(a)
    kernels.fmod3_kernel[((a.numel() + 1023) // 1024,)](a, out, a.numel(), PERCENT=percent, BLOCK=1024)
    return _count(out, torch.fmod(a, 3))


def _count(out: torch.Tensor, ref: torch.Tensor) -> int:
    same = (out == ref) | (out.isnan() & ref.isnan())
    zeros = same & (ref == 0)
    return int((~same).sum()) + int((torch.signbit(out[zeros]) != torch.signbit(ref[zeros])).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 16, help="random elements per seed")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    report = {"device": torch.cuda.get_device_name() if dev == "cuda" else "cpu (Triton interpreter)",
              "torch": torch.__version__, "n_per_seed": args.n, "seeds": args.seeds, "special_values": 12,
              "command": " ".join(["python3", *sys.argv])}
    with tempfile.TemporaryDirectory() as tmp:
        kernels = _load_kernels(Path(tmp))
        special = {"new": 0, "old": 0}
        random = {"new": 0, "old": 0}
        by_3 = {"new": 0, "fp32_percent": 0}
        sa = torch.tensor(_SPECIAL_A, device=dev)
        sb = torch.tensor(_SPECIAL_B, device=dev)
        for variant in ("new", "old"):
            special[variant] = mismatches(kernels, sa, sb, variant == "old")
        for seed in range(args.seeds):
            torch.manual_seed(seed)
            a = torch.randn(args.n, device=dev) * 10
            b = (torch.rand(args.n, device=dev) * 2 + 0.5) * torch.where(torch.randn(args.n, device=dev) < 0, -1.0, 1.0)
            for variant in ("new", "old"):
                random[variant] += mismatches(kernels, a, b, variant == "old")
            for variant in ("new", "fp32_percent"):
                by_3[variant] += mismatches_by_3(kernels, a, variant == "fp32_percent")
    report.update({"random_mismatches": random, "special_mismatches": special, "fmod_scalar_3_mismatches": by_3,
                   "random_elements": args.n * args.seeds})
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
