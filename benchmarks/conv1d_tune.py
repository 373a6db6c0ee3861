"""Tune knowledge_base/code_samples/conv1d_fast.py on a GPU for the conv1d spec's prod_fp16 case
(x [2048, 96, 200] fp16): every variant is checked against the reference first (NaN-poisoned output, then
fresh inputs; the spec's tolerances), then all are timed interleaved, with an L2 flush before every sample
(evaluators/timing.py), against the references.

Kinds of variant:
- `sample`: the sample's kernels (repack + flat tiles + coalesced shifted taps) with other constants;
- `flat`: the same flat tiling without the coalescing trick (UNROLL=0: a runtime channel loop, pipelined by
  num_stages; UNROLL=1: unrolled);
- `rows`: one batch row per tile (BLOCK_L >= L, 200 -> 256), the first version of the sample; `gather` is
  it reading the fp32 [C_out, C_in, K] weight with a stride-K gather and a cast in every program (no repack);
- `tma`: x and the repacked weight read through device-side tensor descriptors (probed in a subprocess:
  on Triton 3.6 / H200 every variant died with an illegal instruction, which poisons the CUDA context).
References: the spec's eager module (weight casts included), F.conv1d on pre-cast weights, torch.compile of
the module, F.conv2d on a channels_last [B, C, 1, L] copy (conversion outside / inside the timed region),
and the old seed (knowledge_base/code_samples/conv1d.py).
Imports only torch, triton, the standard library and evaluators/ (runs on a bare GPU image).
Usage: python benchmarks/conv1d_tune.py --out DIR [--round 1|2|3] [--profile NAMES]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from evaluators.gpu_state import gpu_state  # noqa: E402
from evaluators.timing import interleaved_timings  # noqa: E402

SAMPLES = ROOT / "knowledge_base" / "code_samples"
TOL = {torch.float16: (1e-2, 1e-2), torch.float32: (1e-4, 1e-4)}


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@triton.jit
def _rows_kernel(x_ptr, w_ptr, b_ptr, y_ptr, B, C_out, stride_wk, stride_wco, stride_wci,
                 C_IN: tl.constexpr, L: tl.constexpr, KSIZE: tl.constexpr, PAD: tl.constexpr,
                 BLOCK_L: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr,
                 ROWS_PER_PROGRAM: tl.constexpr):
    n_co = tl.cdiv(C_out, BLOCK_CO)
    pid = tl.program_id(0)
    offs_co = (pid % n_co) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    co_mask = offs_co < C_out
    bias = tl.load(b_ptr + offs_co, mask=co_mask, other=0.0).to(y_ptr.dtype.element_ty).to(tl.float32)
    for r in range(ROWS_PER_PROGRAM):
        row = (pid // n_co) * ROWS_PER_PROGRAM + r
        if row < B:
            x_row = x_ptr + row.to(tl.int64) * (C_IN * L)
            y_row = y_ptr + row.to(tl.int64) * C_out * L
            for l0 in range(0, L, BLOCK_L):
                offs_l = l0 + tl.arange(0, BLOCK_L)
                acc = tl.zeros([BLOCK_CO, BLOCK_L], dtype=tl.float32)
                for k in tl.static_range(KSIZE):
                    pos = offs_l + (k - PAD)
                    pos_mask = (pos >= 0) & (pos < L)
                    for ci0 in range(0, C_IN, BLOCK_CI):
                        offs_ci = ci0 + tl.arange(0, BLOCK_CI)
                        ci_mask = offs_ci < C_IN
                        w = tl.load(w_ptr + k * stride_wk + offs_co[:, None] * stride_wco
                                    + offs_ci[None, :] * stride_wci, mask=co_mask[:, None] & ci_mask[None, :],
                                    other=0.0)
                        xt = tl.load(x_row + offs_ci[:, None] * L + pos[None, :],
                                     mask=ci_mask[:, None] & pos_mask[None, :], other=0.0)
                        acc = tl.dot(w.to(xt.dtype), xt, acc)
                acc += bias[:, None]
                tl.store(y_row + offs_co[:, None] * L + offs_l[None, :], acc.to(y_ptr.dtype.element_ty),
                         mask=co_mask[:, None] & (offs_l < L)[None, :])


@triton.jit
def _flat_kernel(x_ptr, wp_ptr, b_ptr, y_ptr, B, C_out,
                 C_IN: tl.constexpr, L: tl.constexpr, KSIZE: tl.constexpr, PAD: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr, UNROLL: tl.constexpr):
    n_co = tl.cdiv(C_out, BLOCK_CO)
    pid = tl.program_id(0)
    offs_co = (pid % n_co) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    co_mask = offs_co < C_out
    offs_n = (pid // n_co).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < B * L
    b = offs_n // L
    lpos = offs_n - b * L
    acc = tl.zeros([BLOCK_CO, BLOCK_N], dtype=tl.float32)
    for k in tl.static_range(KSIZE):
        pos = lpos + (k - PAD)
        x_off = b * (C_IN * L) + pos
        pos_mask = n_mask & (pos >= 0) & (pos < L)
        for ci0 in tl.static_range(0, C_IN if UNROLL else BLOCK_CI, BLOCK_CI):
            for ci1 in range(0, 1 if UNROLL else C_IN, BLOCK_CI):  # UNROLL=0: a runtime (pipelined) loop
                offs_ci = ci0 + ci1 + tl.arange(0, BLOCK_CI)
                ci_mask = offs_ci < C_IN
                w = tl.load(wp_ptr + (k * C_out + offs_co[:, None]) * C_IN + offs_ci[None, :],
                            mask=co_mask[:, None] & ci_mask[None, :], other=0.0)
                xt = tl.load(x_ptr + offs_ci[:, None] * L + x_off[None, :], mask=ci_mask[:, None] & pos_mask[None, :],
                             other=0.0)
                acc = tl.dot(w, xt, acc)
    bias = tl.load(b_ptr + offs_co, mask=co_mask, other=0.0).to(y_ptr.dtype.element_ty).to(tl.float32)
    acc += bias[:, None]
    y_off = b * (C_out * L) + lpos
    tl.store(y_ptr + offs_co[:, None] * L + y_off[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=co_mask[:, None] & n_mask[None, :])


@triton.jit
def _tma_kernel(x_ptr, wp_ptr, b_ptr, y_ptr, B, C_out,
                C_IN: tl.constexpr, L: tl.constexpr, KSIZE: tl.constexpr, PAD: tl.constexpr,
                BLOCK_L: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr, DESC2D: tl.constexpr):
    # one program per (batch row, co-block); descriptors zero-fill out-of-range boxes (the padding).
    # DESC2D: x as [B*C_in, L], wp as [K*C_out, C_in] (needs BLOCK_CI | C_in; extra co rows masked at the store)
    if DESC2D:
        x_desc = tl.make_tensor_descriptor(x_ptr, shape=[B * C_IN, L], strides=[L, 1],
                                           block_shape=[BLOCK_CI, BLOCK_L])
        w_desc = tl.make_tensor_descriptor(wp_ptr, shape=[KSIZE * C_out, C_IN], strides=[C_IN, 1],
                                           block_shape=[BLOCK_CO, BLOCK_CI])
    else:
        x_desc = tl.make_tensor_descriptor(x_ptr, shape=[B, C_IN, L], strides=[C_IN * L, L, 1],
                                           block_shape=[1, BLOCK_CI, BLOCK_L])
        w_desc = tl.make_tensor_descriptor(wp_ptr, shape=[KSIZE, C_out, C_IN], strides=[C_out * C_IN, C_IN, 1],
                                           block_shape=[1, BLOCK_CO, BLOCK_CI])
    n_co = tl.cdiv(C_out, BLOCK_CO)
    n_ci: tl.constexpr = (C_IN + BLOCK_CI - 1) // BLOCK_CI
    co0 = (tl.program_id(0) % n_co) * BLOCK_CO
    row = tl.program_id(0) // n_co
    offs_co = co0 + tl.arange(0, BLOCK_CO)
    co_mask = offs_co < C_out
    bias = tl.load(b_ptr + offs_co, mask=co_mask, other=0.0).to(y_ptr.dtype.element_ty).to(tl.float32)
    for l0 in range(0, L, BLOCK_L):
        acc = tl.zeros([BLOCK_CO, BLOCK_L], dtype=tl.float32)
        for j in range(KSIZE * n_ci):
            k = j // n_ci
            ci0 = (j - k * n_ci) * BLOCK_CI
            if DESC2D:
                xt = x_desc.load([row * C_IN + ci0, l0 + k - PAD])
                w = w_desc.load([k * C_out + co0, ci0])
            else:
                xt = x_desc.load([row, ci0, l0 + k - PAD]).reshape(BLOCK_CI, BLOCK_L)
                w = w_desc.load([k, co0, ci0]).reshape(BLOCK_CO, BLOCK_CI)
            acc = tl.dot(w, xt, acc)
        offs_l = l0 + tl.arange(0, BLOCK_L)
        acc += bias[:, None]
        tl.store(y_ptr + row.to(tl.int64) * C_out * L + offs_co[:, None] * L + offs_l[None, :],
                 acc.to(y_ptr.dtype.element_ty), mask=co_mask[:, None] & (offs_l < L)[None, :])


def make_fn(mod, kind, x, weight, bias, cfg, out=None):
    """A zero-argument forward: repack (unless `gather`), then the kind's kernel with the constants in cfg."""
    batch, c_in, length = x.shape
    c_out, _, ksize = weight.shape
    co, ci, n = cfg["co"], cfg["ci"], cfg["l"]
    launch = dict(C_IN=c_in, L=length, KSIZE=ksize, PAD=1, BLOCK_CO=co, BLOCK_CI=ci, num_warps=cfg["warps"])

    def fn():
        if kind == "gather":
            wp, strides = weight, (1, c_in * ksize, ksize)
        else:
            wp, strides = torch.empty((ksize, c_out, c_in), dtype=x.dtype, device=x.device), (c_out * c_in, c_in, 1)
            mod._repack_kernel[(triton.cdiv(wp.numel(), 1024),)](weight, wp, c_out, c_in, KSIZE=ksize,
                                                                 REPACK_BLOCK=1024)
        y = out if out is not None else torch.empty((batch, c_out, length), dtype=x.dtype, device=x.device)
        flat_grid = (triton.cdiv(c_out, co) * triton.cdiv(batch * length, n),)
        if kind == "sample":
            mod._conv1d_kernel[flat_grid](x, wp, bias, y, batch, c_out, BLOCK_N=n, **launch)
        elif kind == "flat":
            _flat_kernel[flat_grid](x, wp, bias, y, batch, c_out, BLOCK_N=n, UNROLL=bool(cfg["unroll"]),
                                    num_stages=cfg["stages"], **launch)
        elif kind == "tma":
            _tma_kernel[(triton.cdiv(c_out, co) * batch,)](x, wp, bias, y, batch, c_out, BLOCK_L=n,
                                                          DESC2D=bool(cfg["d2"]), num_stages=cfg["stages"], **launch)
        else:  # rows / gather
            rows = cfg["rows"]
            _rows_kernel[(triton.cdiv(c_out, co) * triton.cdiv(batch, rows),)](
                x, wp, bias, y, batch, c_out, *strides, BLOCK_L=n, ROWS_PER_PROGRAM=rows, num_stages=cfg["stages"],
                **launch)
        return y
    return fn


def variants(round_: int) -> list[tuple[str, str, dict]]:
    """(name, kind, config): l = BLOCK_L (rows, tma) or BLOCK_N (sample, flat); co/ci = BLOCK_CO/BLOCK_CI.

    Rounds 1 and 2 ran with an earlier revision of this script; their variants are kept where the kernel
    still exists here (round 1's persistent TMA kernel and round 2's transposed flat dot are not)."""
    out: list[tuple[str, str, dict]] = []

    def add(prefix, kind, base, changes):
        for change in changes:
            name = prefix + ("_".join(f"{k}{v}" for k, v in change.items()) or "base")
            out.append((name, kind, {**base, **change}))

    rows = dict(l=256, co=128, ci=32, rows=1, warps=8, stages=2)
    flat = dict(l=128, co=128, ci=32, warps=4, stages=1, unroll=0)
    sample = dict(l=128, co=128, ci=32, warps=4)
    if round_ == 1:
        add("fast_", "rows", rows, [{}, dict(warps=16), dict(stages=1), dict(stages=3), dict(ci=16, stages=3),
                                    dict(ci=64), dict(co=64, warps=4), dict(co=32, warps=4), dict(rows=2),
                                    dict(rows=4), dict(rows=8), dict(l=128, warps=4), dict(co=64)])
        add("gather_", "gather", rows, [{}])
        add("tma_", "tma", {**rows, "d2": 0}, [{}, dict(stages=3), dict(stages=4), dict(ci=64, stages=3),
                                               dict(l=128, warps=4), dict(co=64, warps=4, stages=3)])
        add("flat_", "flat", {**flat, "l": 256, "warps": 8, "stages": 2}, [{}, dict(l=128, warps=4),
                                                                            dict(ci=16, stages=3)])
    elif round_ == 2:
        add("fast_", "rows", rows, [{}, dict(stages=1), dict(l=64, warps=4, stages=1),
                                    dict(l=128, warps=4, stages=1)])
        add("tma_", "tma", {**rows, "d2": 0}, [dict(l=64, warps=4, stages=3), dict(d2=1, stages=3)])
        add("flat2_", "flat", flat, [{}, dict(stages=2), dict(stages=3), dict(unroll=1), dict(l=64),
                                     dict(l=64, unroll=1), dict(l=64, stages=2), dict(l=256, warps=8),
                                     dict(l=256, warps=8, unroll=1), dict(unroll=1, warps=8),
                                     dict(l=64, unroll=1, ci=16), dict(l=64, unroll=1, ci=64), dict(l=32, unroll=1),
                                     dict(l=64, unroll=1, warps=2), dict(l=32, unroll=1, warps=2),
                                     dict(l=64, unroll=1, co=64)])
    else:
        add("sample_", "sample", sample, [{}, dict(l=64), dict(l=32), dict(l=256, warps=8), dict(warps=8),
                                          dict(l=64, warps=2), dict(ci=16), dict(ci=64), dict(co=64),
                                          dict(l=64, ci=16), dict(l=64, co=64), dict(l=64, warps=8),
                                          dict(l=32, ci=16), dict(warps=8, ci=16)])
        add("flat_", "flat", flat, [dict(unroll=1), {}])  # round 2's best and its baseline, without the trick
        add("rows_", "rows", rows, [dict(stages=1)])  # round 1's best
        add("gather_", "gather", rows, [dict(stages=1)])  # the same without the repack
    return out


def check(row, fn_for, inp, ref_fn):
    """NaN-poisoned output, then fresh inputs; updates row with status and max_abs_err."""
    atol, rtol = TOL[inp.dtype]
    t0 = time.time()
    try:
        errs = []
        for trial in range(2):
            xi = inp if trial == 0 else torch.randn_like(inp)
            expected = ref_fn(xi)
            out = torch.full_like(expected, float("nan"))
            fn_for(xi, out)()
            torch.cuda.synchronize()
            bad = ~torch.isclose(out.float(), expected.float(), atol=atol, rtol=rtol)
            errs.append((out.float() - expected.float()).abs().nan_to_num(float("inf")).max().item())
            if bad.any():
                raise AssertionError(f"{int(bad.sum())} elements off (max err {errs[-1]:.3g})")
        row.update(status="ok", max_abs_err=max(errs))
    except Exception as exc:  # noqa: BLE001 - a failing variant is a result, not a crash
        row.update(status="fail", reason=f"{type(exc).__name__}: {str(exc)[:300]}")
    row["check_s"] = round(time.time() - t0, 1)
    print(f"check {row['name']} [{row['dtype']}]: {row['status']} {row.get('reason', row.get('max_abs_err'))} "
          f"({row['check_s']} s)", flush=True)
    return row["status"] == "ok"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--round", type=int, default=3, choices=(1, 2, 3), help="which variant list to run")
    parser.add_argument("--target-ms", type=float, default=60.0, help="timed milliseconds per variant")
    parser.add_argument("--profile", default="", help="comma-separated variant names: run each once (for ncu)")
    parser.add_argument("--probe", help="internal: check one variant in this process, exit 0 if correct")
    args = parser.parse_args()
    t_start = time.time()
    all_variants = variants(args.round)
    skipped = {}
    if not args.probe and not args.profile:  # a TMA fault poisons the CUDA context: probe in subprocesses
        for name in [n for n, kind, _ in all_variants if kind == "tma"]:
            proc = subprocess.run([sys.executable, __file__, "--out", args.out, "--round", str(args.round),
                                   "--probe", name], capture_output=True, text=True, timeout=240)
            tail = (proc.stdout.strip()[-300:] + " " + proc.stderr.strip()[-300:]).replace("\n", " ")
            print(f"probe {name}: rc {proc.returncode} {tail}", flush=True)
            if proc.returncode != 0:
                skipped[name] = tail
    torch.backends.cudnn.allow_tf32 = False  # the spec's fp32 tolerance assumes an IEEE reference
    torch.backends.cuda.matmul.allow_tf32 = False
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    fast = _load(SAMPLES / "conv1d_fast.py", "conv1d_fast")
    seed = _load(SAMPLES / "conv1d.py", "conv1d_seed")
    spec = _load(ROOT / "kernelevolve" / "builtin_specs" / "conv1d.py", "conv1d_spec")
    torch.manual_seed(0)
    ref_mod = spec.PytorchModel().cuda()
    seed_mod, fast_mod = seed.TritonModel().cuda(), fast.TritonModel().cuda()
    seed_mod.load_state_dict(ref_mod.state_dict())
    fast_mod.load_state_dict(ref_mod.state_dict())
    weight, bias = ref_mod.conv.weight.detach(), ref_mod.conv.bias.detach()
    x = torch.randn(2048, 96, 200, device="cuda", dtype=torch.float16)
    x32 = torch.randn(2048, 96, 200, device="cuda")
    w16, b16 = weight.half(), bias.half()
    rows, fns = [], {}
    with torch.no_grad():
        for name, kind, cfg in all_variants:
            def fn_for(xi, out, kind=kind, cfg=cfg):
                return make_fn(fast, kind, xi, weight, bias, cfg, out=out)
            row = {"name": name, "kind": kind, "config": cfg, "dtype": "float16"}
            if args.profile:
                if name in args.profile.split(","):
                    fn_for(x, None)()
                    torch.cuda.synchronize()
                continue
            if args.probe and name != args.probe:
                continue
            if name in skipped:
                rows.append({**row, "status": "fail", "reason": "probe failed: " + skipped[name][-200:]})
                continue
            ok = check(row, fn_for, x, ref_mod)
            rows.append(row)
            if args.probe:
                sys.exit(0 if ok else 1)
            if ok:
                fns[name] = fn_for(x, None)
        if args.profile:
            return
        fast_mod32_ok = check({"name": "module_fast", "dtype": "float32"}, lambda xi, out: lambda: out.copy_(
            fast_mod(xi)), x32, ref_mod)
        fast_mod_ok = check({"name": "module_fast", "dtype": "float16"}, lambda xi, out: lambda: out.copy_(
            fast_mod(xi)), x, ref_mod)
        seed_ok = check({"name": "old_seed", "dtype": "float16"}, lambda xi, out: lambda: out.copy_(seed_mod(xi)),
                        x, ref_mod)
        x2d = x.view(2048, 96, 1, 200)
        x_cl = x2d.contiguous(memory_format=torch.channels_last)
        w2d = w16.view(96, 96, 1, 3).contiguous(memory_format=torch.channels_last)
        cl_ok = bool(torch.allclose(F.conv2d(x_cl, w2d, b16, padding=(0, 1)).view(2048, 96, 200).float(),
                                    ref_mod(x).float(), atol=1e-2, rtol=1e-2))
        t0 = time.time()
        compiled = torch.compile(ref_mod)
        compiled(x)
        compiled(x)
        compile_s = time.time() - t0
        refs = {
            "ref_eager_module": lambda: ref_mod(x), "ref_F.conv1d": lambda: F.conv1d(x, w16, b16, padding=1),
            "ref_torch.compile": lambda: compiled(x),
            "ref_conv2d_cl": lambda: F.conv2d(x_cl, w2d, b16, padding=(0, 1)),
            "ref_conv2d_cl+convert": lambda: F.conv2d(x2d.contiguous(memory_format=torch.channels_last), w2d, b16,
                                                      padding=(0, 1)),
            "old_seed": lambda: seed_mod(x), "module_fast": lambda: fast_mod(x),
        }
        timings = interleaved_timings({**refs, **fns}, target_ms_per_fn=args.target_ms)
        fp32_fns = {"ref_F.conv1d_fp32": lambda: F.conv1d(x32, weight, bias, padding=1)}
        if fast_mod32_ok:
            fp32_fns["module_fast_fp32"] = lambda: fast_mod(x32)
        timings32 = interleaved_timings(fp32_fns, target_ms_per_fn=args.target_ms / 2)

    nbytes = 2 * x.numel() * x.element_size() + (weight.numel() + bias.numel()) * 4
    table = []
    for name, t in sorted({**timings, **timings32}.items(), key=lambda kv: kv[1].median_ms):
        is32 = name.endswith("fp32")
        base = (timings32 if is32 else timings)["ref_F.conv1d_fp32" if is32 else "ref_F.conv1d"].median_ms
        table.append({"name": name, "median_ms": t.median_ms, "iqr_ms": t.iqr_ms, "reps": t.reps,
                      "speedup_vs_F.conv1d": base / t.median_ms,
                      "gbps": (2 if is32 else 1) * nbytes / (t.median_ms * 1e-3) / 1e9})
    report = {"benchmark": "conv1d_tune", "round": args.round,
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "command": "python " + " ".join(shlex.quote(a) for a in sys.argv), "gpu": gpu_state(),
              "torch": torch.__version__, "triton": triton.__version__, "case": "prod_fp16 x[2048, 96, 200]",
              "bytes_fp16": nbytes, "checks": rows, "module_fast_ok": [fast_mod_ok, fast_mod32_ok],
              "old_seed_correct": seed_ok, "conv2d_cl_correct": cl_ok, "torch_compile_s": compile_s,
              "timings": table, "wall_s": time.time() - t_start}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"conv1d_tune_round{args.round}.json").write_text(json.dumps(report, indent=2, default=str))
    (out / f"conv1d_tune_round{args.round}.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report: dict) -> str:
    gpu = report["gpu"]
    lines = [f"# conv1d tuning, round {report['round']}, on {gpu.get('name', '?')} ({report['date']})", "",
             f"torch {report['torch']}, triton {report['triton']}, driver {gpu.get('driver_version', '?')}, "
             f"SM clock {gpu.get('clocks.sm', '?')} (max {gpu.get('clocks.max.sm', '?')}).",
             f"Command: `{report['command']}`; case {report['case']} (rows ending fp32: the prod_fp32 case).", "",
             "| variant | median ms | IQR ms | x vs F.conv1d | GB/s (min bytes) |", "|---|---|---|---|---|"]
    for r in report["timings"]:
        lines.append(f"| {r['name']} | {r['median_ms']:.4f} | {r['iqr_ms']:.4f} | {r['speedup_vs_F.conv1d']:.2f}x "
                     f"| {r['gbps']:.0f} |")
    failed = [c for c in report["checks"] if c["status"] != "ok"]
    lines += ["", f"Correctness: {len(report['checks']) - len(failed)} of {len(report['checks'])} variant checks "
              f"passed; module_fast fp16/fp32 {report['module_fast_ok']}, old seed {report['old_seed_correct']}, "
              f"conv2d channels_last {report['conv2d_cl_correct']}."]
    lines += [f"- FAILED {c['name']} [{c['dtype']}]: {c['reason'][:160]}" for c in failed]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
