"""Does a busy GPU move a timing? One fixed kernel per kind, timed alone and inside an 8-slot search (issue #31).

For each kind, ``--rounds`` times, interleaved: ``ke eval`` of the kind's fixed kernel with nothing else on the
GPU ("alone"), then the same ``ke eval`` while a ``ke search --concurrency 8`` of the kind's busy problem runs
on the same GPU ("busy"; the eval starts once the search has finished its first node, so its slots are
checking, judging and timing). Each case's latency is the evaluator's own median; the table gives, per kind,
the median over rounds of each case, busy over alone, and the spread over rounds.

Kinds (a spec and its kernel; the kernel is the spec's offline first draft unless given):

* ``softmax``: the built-in op and its knowledge-base sample, the light case (#31 measured it within 1-3%);
* ``block``: a launch-heavy block of the own corpus (a pre-norm transformer encoder layer);
* ``big``: a problem with multi-GB inputs and outputs beside a search of the same problem (``--big``, e.g. a
  KernelBench elementwise file at its published size).

  python3 benchmarks/timing_isolation.py --big .kb/level1/21_Sigmoid.py --rounds 5 \
      --out benchmarks/results/timing_isolation_h100

Nothing here is a unit test: it needs a GPU and minutes. The decision it feeds: where busy and alone differ by
more than 2%, every GPU phase should take the device's lock (shared for checks, exclusive for timing).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KINDS = {
    "softmax": ("softmax", ROOT / "knowledge_base" / "code_samples" / "softmax.py"),
    "block": (str(ROOT / "benchmarks" / "any_op" / "level3" / "04_transformer_encoder_prenorm.py"), None),
}


def _ke(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelevolve.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _draft(spec: str, hw: str, folder: Path) -> Path:
    """The offline operator's first draft of ``spec`` for ``hw``: a fixed kernel both arms time."""
    sys.path.insert(0, str(ROOT))
    from kernelevolve.lowering import lower_spec

    path = folder / f"{Path(spec).stem}_draft.py"
    path.write_text(lower_spec(spec, hw), encoding="utf-8")
    return path


def _eval(spec: str, kernel: Path, hw: str, state: Path) -> dict[str, float]:
    done = _ke("eval", "--op", spec, "--hw", hw, str(kernel), "--json", "--state-dir", str(state))
    if done.returncode != 0:
        raise SystemExit(f"ke eval failed: {done.stderr.strip().splitlines()[-1:]}")
    verdict = json.loads(done.stdout)
    if verdict["status"] != "ok":
        raise SystemExit(f"the fixed kernel of {spec} is {verdict['status']}: {verdict['reason']}")
    return {c["name"]: c["latency_ms"] for c in verdict["cases"] if c.get("latency_ms")}


def _start_search(spec: str, hw: str, state: Path) -> subprocess.Popen:
    """An 8-slot search of ``spec`` on the same GPU, returned once its first node is stored."""
    log = state / "search.log"
    state.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "kernelevolve.cli.main", "search", "--op", spec, "--hw", hw,
                             "--strategy", "random", "--budget", "400", "--concurrency", "8", "--executor", "local",
                             "--no-reuse", "--state-dir", str(state)], cwd=ROOT, stdout=open(log, "w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if " node 1:" in log.read_text(errors="replace"):
            return proc
        time.sleep(2)
    _stop(proc)
    raise SystemExit(f"the busy search of {spec} evaluated no node within 600 s; see {log}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def measure(kind: str, spec: str, kernel: Path, hw: str, rounds: int, work: Path) -> dict[str, Any]:
    alone: list[dict[str, float]] = []
    busy: list[dict[str, float]] = []
    for r in range(rounds):
        alone.append(_eval(spec, kernel, hw, work / f"{kind}_eval"))
        search = _start_search(spec, hw, work / f"{kind}_search_{r}")
        try:
            busy.append(_eval(spec, kernel, hw, work / f"{kind}_eval"))
        finally:
            _stop(search)
        print(f"{kind} round {r + 1}/{rounds}: alone {alone[-1]} busy {busy[-1]}", flush=True)
    cases = {}
    for name in alone[0]:
        a, b = [x[name] for x in alone], [x[name] for x in busy]
        cases[name] = {"alone_ms": statistics.median(a), "busy_ms": statistics.median(b),
                       "busy_over_alone": statistics.median(b) / statistics.median(a),
                       "alone_range_ms": [min(a), max(a)], "busy_range_ms": [min(b), max(b)]}
    return {"kind": kind, "spec": spec, "kernel": str(kernel), "rounds": rounds, "cases": cases}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Timing alone and beside an 8-slot search ({report['gpu']})", "",
             f"{report['date']}, torch {report['torch']}, triton {report['triton']}, commit {report['commit']}.", "",
             f"Command: `{report['command']}`", "",
             "| kind | case | alone ms (range) | busy ms (range) | busy / alone |", "|---|---|---|---|---|"]
    for row in report["kinds"]:
        for name, c in row["cases"].items():
            lo, hi = c["alone_range_ms"]
            blo, bhi = c["busy_range_ms"]
            lines.append(f"| {row['kind']} | {name} | {c['alone_ms']:.4f} ({lo:.4f}-{hi:.4f}) | "
                         f"{c['busy_ms']:.4f} ({blo:.4f}-{bhi:.4f}) | {c['busy_over_alone']:.3f} |")
    worst = max((c["busy_over_alone"] for row in report["kinds"] for c in row["cases"].values()), default=None)
    lines += ["", f"Largest busy/alone ratio: {worst:.3f}." if worst else "No case was timed."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hw", default="h100")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kinds", default="softmax,block,big")
    parser.add_argument("--big", help="a spec with multi-GB inputs and outputs (the 'big' kind)")
    parser.add_argument("--out", type=Path, required=True, help="path prefix of the .json and .md to write")
    args = parser.parse_args()
    import torch
    import triton

    kinds = dict(KINDS)
    if args.big:
        kinds["big"] = (args.big, None)
    work = Path(tempfile.mkdtemp(prefix="ke-isolation-"))
    rows = []
    for kind in [k for k in args.kinds.split(",") if k]:
        if kind not in kinds:
            raise SystemExit(f"unknown kind '{kind}' (known: {', '.join(kinds)}; 'big' needs --big)")
        spec, kernel = kinds[kind]
        rows.append(measure(kind, spec, kernel or _draft(spec, args.hw, work), args.hw, args.rounds, work))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    report = {"gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else args.hw,
              "torch": torch.__version__, "triton": triton.__version__,
              "commit": os.environ.get("KE_COMMIT") or commit.stdout.strip(),
              "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "command": " ".join(["python3", *sys.argv]), "kinds": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    args.out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
