"""Device memory of one evaluation, per KernelBench problem at its published size (issue #28 item 1).

For every problem under ``--problems`` (a KernelBench-format folder: ``level1/``, ``level2/``, ...), the
offline operator's first draft (the lowering's, or one lowered beforehand under ``--drafts``) goes through one
whole evaluation on one GPU, as a search's node would: the worker judges, a candidate process checks and times.
Evaluations run one at a time, so the GPU holds nothing else. Two views of the peak:
- the allocators': ``torch.cuda.max_memory_allocated`` in every process of the evaluation, step by step
  (the two processes take turns, so a step's total is the active one's peak plus what the other holds:
  ``extra.device_memory`` of each result, written by the worker);
- the driver's: the device's used memory, sampled through NVML every few milliseconds, less what was used
  just before the evaluation (so it includes the new candidate process's CUDA context and what the caching
  allocators reserve beyond what they hand out).
The bound is 3x one case's bytes (its inputs, one call's outputs and the module's parameters) plus 1 GiB.

One GPU per process; for several, one process per GPU, each with its own ``CUDA_VISIBLE_DEVICES`` and
``--shard i/n``, then ``--merge``:

  CUDA_VISIBLE_DEVICES=0 python3 benchmarks/eval_memory.py --problems ../shared/kernelbench --hw h100 \\
      --shard 0/4 --out rows0.jsonl
  python3 benchmarks/eval_memory.py --merge rows*.jsonl --write benchmarks/results/eval_memory_h100

Rows are appended as each evaluation ends, so an interrupted run keeps what it measured and a re-run skips it.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import fnmatch
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GIB = 1 << 30
RATIO, SLACK = 3, GIB  # the bound: RATIO x the case's bytes + SLACK
WARMUP_SPEC = ROOT / "kernelevolve" / "builtin_specs" / "swish.py"
WARMUP_CANDIDATE = ROOT / "tests" / "adversarial" / "candidates" / "honest__swish_autotune.py"


def bound(case_bytes: int) -> int:
    return RATIO * case_bytes + SLACK


class DriverMemory:
    """The device's used bytes as the driver reports them (NVML), sampled on a thread while an evaluation runs."""

    class _Info(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

    def __init__(self, index: int, period_s: float = 0.005) -> None:
        self.period_s = period_s
        self._lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self._lib.nvmlInit_v2() != 0:
            raise OSError("nvmlInit failed")
        self._handle = ctypes.c_void_p()
        if self._lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self._handle)) != 0:
            raise OSError(f"no NVML device {index}")
        self._peak, self._stop, self._thread = 0, threading.Event(), None

    def used(self) -> int:
        info = self._Info()
        self._lib.nvmlDeviceGetMemoryInfo(self._handle, ctypes.byref(info))
        return int(info.used)

    def start(self) -> int:
        """Start sampling; returns the bytes used now (the baseline)."""
        self._peak, self._stop = self.used(), threading.Event()
        baseline = self._peak
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return baseline

    def stop(self) -> int:
        """Stop sampling; returns the peak bytes used while it ran."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self._peak

    def _sample(self) -> None:
        while not self._stop.is_set():
            self._peak = max(self._peak, self.used())
            time.sleep(self.period_s)


def nvml_index() -> int:
    """The physical index of this process's GPU (NVML counts in PCI order: CUDA_DEVICE_ORDER=PCI_BUS_ID)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    return int(visible) if visible.isdigit() else 0


def problem_files(root: Path, levels: list[str], only: str | None) -> list[Path]:
    files = [f for level in levels for f in sorted((root / level).glob("*.py"))]
    if only:
        files = [f for f in files if any(fnmatch.fnmatch(key(f), p) for p in only.split(","))]
    return files


def key(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def shard(files: list[Path], which: str | None) -> list[Path]:
    """Every n-th problem from i, after ordering by estimated case bytes, so shards get alike mixes of sizes."""
    if not which:
        return files
    i, n = (int(x) for x in which.split("/"))
    return sorted(files, key=lambda f: -(estimated_case_bytes(f) or 0))[i::n]


def estimated_case_bytes(path: Path) -> int | None:
    from evaluators.footprint import case_bytes
    from evaluators.spec import load_spec

    try:
        return case_bytes(load_spec(str(path)), "prod")
    except Exception:  # noqa: BLE001 - a problem the footprint cannot read: measured anyway
        return None


def draft_for(path: Path, drafts: Path | None, hw: str) -> tuple[str | None, str]:
    """(the draft's source or None, why there is none)."""
    if drafts is not None:
        stored = drafts / f"{path.parent.name}_{path.stem}.py"
        if stored.exists():
            return stored.read_text(), ""
    from kernelevolve.lowering import lower_spec

    try:
        return lower_spec(str(path), hw), ""
    except Exception as exc:  # noqa: BLE001 - a problem the lowering does not cover has no evaluation to measure
        return None, f"no draft: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"


def measure(files: list[Path], args: argparse.Namespace) -> None:
    from interpreters.executor import LocalExecutor
    from interpreters.targets import get_target

    out = Path(args.out)
    done = {row["problem"] for row in read_rows([out])} if out.exists() else set()
    driver = None
    try:
        driver = DriverMemory(nvml_index())
    except OSError as exc:
        print(f"no driver view: {exc}", file=sys.stderr)
    scratch = Path(tempfile.mkdtemp(prefix="ke-evalmem-"))
    executor = LocalExecutor(get_target(args.hw), scratch, timeout_s=args.timeout)
    try:
        # one evaluation first, not measured: the worker's own context and the first spare candidate process
        # are then in every baseline, as they are in a running search
        executor.evaluate(WARMUP_SPEC, WARMUP_CANDIDATE.read_text())
        for path in files:
            if key(path) in done:
                continue
            source, why = draft_for(path, Path(args.drafts) if args.drafts else None, args.hw)
            row: dict[str, Any] = {"problem": key(path), "estimated_case_bytes": estimated_case_bytes(path),
                                   "commit": os.environ.get("KE_COMMIT")}
            if source is None:
                row.update(status="no draft", reason=why)
            else:
                before = driver.start() if driver else None
                started = time.monotonic()
                result = executor.evaluate(path, source)
                row.update(row_for(result.to_dict(), time.monotonic() - started))
                if driver is not None:
                    row.update(driver_before_bytes=before, driver_peak_bytes=driver.stop() - before)
            with out.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(summary_line(row), flush=True)
    finally:
        executor.close()


def row_for(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    extra = result.get("extra") or {}
    memory = extra.get("device_memory") or {}
    row = {"status": result.get("status"), "reason": (result.get("reason") or "")[:200],
           "eval_s": round(seconds, 1), "speedup_vs_eager": result.get("speedup_vs_eager"),
           "speedup_vs_compile": result.get("speedup_vs_compile"), "gpu": (extra.get("gpu") or {}).get("name"),
           "torch": (extra.get("gpu") or {}).get("torch"), "triton": (extra.get("gpu") or {}).get("triton"),
           **{k: memory.get(k) for k in ("case_bytes", "peak_bytes", "peak_in", "candidate_peak_bytes",
                                         "judge_peak_bytes", "judge_held_bytes")}}
    row["scratch_bytes"] = memory.get("scratch_bytes") or {}
    if row["case_bytes"] and row["peak_bytes"]:
        row["ratio"] = row["peak_bytes"] / row["case_bytes"]
        row["within_bound"] = row["peak_bytes"] <= bound(row["case_bytes"])
        # the evaluator's part: the peak less the working memory (beyond its outputs) of the kernel that can have
        # run at the peak: at most one runs at a time, and what the others needed was freed when they returned
        row["kernel_scratch_bytes"] = max((v for k, v in row["scratch_bytes"].items()
                                           if k in running_at(row.get("peak_in") or "")), default=0)
        row["evaluator_bytes"] = row["peak_bytes"] - row["kernel_scratch_bytes"]
        row["evaluator_within_bound"] = row["evaluator_bytes"] <= bound(row["case_bytes"])
    return row


def running_at(peak_in: str) -> set[str]:
    """The kernels that may have been running at the evaluation's peak, from the step it names."""
    if peak_in.startswith("judge"):
        return {"reference"}
    if "timing" in peak_in:  # candidate, eager and compile take turns; the sampled check runs the reference
        return {"candidate", "eager", "compile"}
    return {"candidate"}


def summary_line(row: dict[str, Any]) -> str:
    if row.get("peak_bytes") is None:
        return f"{row['problem']}: {row['status']} {row.get('reason', '')[:120]}"
    return (f"{row['problem']}: {row['status']} case {gb(row['case_bytes'])} peak {gb(row['peak_bytes'])} "
            f"({row.get('ratio', 0):.2f}x, in {row.get('peak_in')}) driver +{gb(row.get('driver_peak_bytes'))} "
            f"{row['eval_s']} s")


def gb(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e9:.2f} GB"


def read_rows(paths: list[Path]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row["problem"]] = row
    return sorted(rows.values(), key=lambda r: r["problem"])


def write(rows: list[dict[str, Any]], stem: Path, meta: dict[str, Any]) -> None:
    measured = [r for r in rows if r.get("ratio") is not None]
    over = [r for r in measured if not r["within_bound"]]
    evaluator_over = [r for r in measured if not r.get("evaluator_within_bound", r["within_bound"])]
    worst = max(measured, key=lambda r: r["peak_bytes"] - bound(r["case_bytes"]), default=None)
    largest = max(measured, key=lambda r: r["ratio"], default=None)
    summary = {"problems": len(rows), "measured": len(measured), "within_bound": len(measured) - len(over),
               "over_bound": [r["problem"] for r in over],
               "evaluator_within_bound": len(measured) - len(evaluator_over),
               "evaluator_over_bound": [r["problem"] for r in evaluator_over],
               "worst_against_bound": worst and worst["problem"], "largest_ratio": largest and largest["problem"]}
    stem.with_suffix(".json").write_text(json.dumps({**meta, "summary": summary, "rows": rows}, indent=1) + "\n")
    lines = [f"# Device memory of one evaluation at published sizes ({meta.get('gpu', '?')})", "",
             f"{meta['date']}, {meta.get('gpu')}, torch {meta.get('torch')}, triton {meta.get('triton')}, "
             f"commit {meta.get('commit')}. Command: `{meta['command']}`.", "",
             f"**{summary['within_bound']} of {len(measured)} measured evaluations within 3x the case + 1 GiB; "
             f"{summary['evaluator_within_bound']} of {len(measured)} once the kernels' own scratch is set apart**"
             f" ({len(rows) - len(measured)} of {len(rows)} problems not measured: no draft, or no memory record)."]
    if worst is not None:
        lines.append(f"Worst against the bound: `{worst['problem']}`, {gb(worst['peak_bytes'])} for a "
                     f"{gb(worst['case_bytes'])} case ({worst['ratio']:.2f}x; bound {gb(bound(worst['case_bytes']))}"
                     f"). Largest ratio: `{largest['problem']}`, {largest['ratio']:.2f}x of a "
                     f"{gb(largest['case_bytes'])} case.")
    if meta.get("notes"):
        lines += ["", meta["notes"].strip()]
    lines += ["", "Peak: the evaluation's allocations in both processes at once (`torch.cuda.max_memory_allocated` "
              "per step: the active process's peak plus what the other holds). Driver: the device's used memory "
              "(NVML) above what it was before the evaluation, including the candidate process's CUDA context. "
              "Kernel scratch: the most that the kernel running at the peak (the candidate in a check, the judge's "
              "reference in a judgement, the candidate, eager or compile in timing) needed beyond its outputs while "
              "it ran: its own working memory (a draft's intermediates, cuDNN's workspace). Evaluator = peak less "
              "that: what the evaluator itself held.", "",
              "| problem | verdict | case | peak | ratio | bound | within | peak in | kernel scratch (whose) | "
              "evaluator | within | driver | seconds | commit |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -(r.get("ratio") or 0)):
        if r.get("ratio") is None:
            lines.append(f"| {r['problem']} | {r['status']}: {r.get('reason', '')[:80]} |" + " |" * 12)
            continue
        scratch = r.get("scratch_bytes") or {}
        mine = {k: v for k, v in scratch.items() if k in running_at(r.get("peak_in") or "")}
        whose = max(mine, key=mine.get) if mine else "-"
        own = r.get("evaluator_within_bound")
        lines.append(f"| {r['problem']} | {r['status']} | {gb(r['case_bytes'])} | {gb(r['peak_bytes'])} | "
                     f"{r['ratio']:.2f}x | {gb(bound(r['case_bytes']))} | {'yes' if r['within_bound'] else '**no**'}"
                     f" | {r.get('peak_in')} | {gb(r.get('kernel_scratch_bytes'))} ({whose}) | "
                     f"{gb(r.get('evaluator_bytes'))} | {'-' if own is None else 'yes' if own else '**no**'} | "
                     f"{gb(r.get('driver_peak_bytes'))} | {r.get('eval_s')} | {r.get('commit') or '?'} |")
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", help="a KernelBench-format folder (level1/, level2/, ...)")
    parser.add_argument("--levels", default="level1,level2")
    parser.add_argument("--only", help="comma-separated globs over levelN/stem")
    parser.add_argument("--hw", default="h100")
    parser.add_argument("--drafts", help="a folder of drafts lowered beforehand, named levelN_stem.py")
    parser.add_argument("--shard", help="i/n: this process's share of the problems")
    parser.add_argument("--timeout", type=float, default=300.0, help="per-phase timeout, seconds")
    parser.add_argument("--out", default="eval_memory.jsonl", help="rows, appended as each evaluation ends")
    parser.add_argument("--merge", nargs="*", help="row files to merge instead of measuring")
    parser.add_argument("--write", help="results stem: writes STEM.json and STEM.md")
    parser.add_argument("--command", default=" ".join(sys.argv), help="the command recorded in the results")
    parser.add_argument("--notes", help="a markdown file of findings, put under the headline")
    parser.add_argument("--torch", help="torch version, for rows that do not record it")
    parser.add_argument("--triton", help="triton version, for rows that do not record it")
    args = parser.parse_args()
    if args.merge is None:
        files = shard(problem_files(Path(args.problems), args.levels.split(","), args.only), args.shard)
        measure(files, args)
    if args.write:
        rows = read_rows([Path(p) for p in (args.merge or [args.out])])

        def seen(field: str, given: str | None) -> str:
            return given or ", ".join(sorted({str(r[field]) for r in rows if r.get(field)})) or "?"

        meta = {"date": dt.date.today().isoformat(), "gpu": seen("gpu", None), "torch": seen("torch", args.torch),
                "triton": seen("triton", args.triton), "commit": seen("commit", None), "command": args.command,
                "notes": Path(args.notes).read_text() if args.notes else ""}
        write(rows, Path(args.write), meta)


if __name__ == "__main__":
    main()
