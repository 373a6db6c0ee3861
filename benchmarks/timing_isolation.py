"""Does a busy GPU move a timing? One fixed kernel per kind, timed alone and inside an 8-slot search (issue #31).

For each kind, ``--rounds`` times, interleaved: ``ke eval`` of the kind's fixed kernel with nothing else on the
GPU ("alone"), then the same ``ke eval`` while a ``ke search --concurrency 8`` of the kind's busy problem runs
on the same GPU ("busy"; the eval starts once the search has finished its first node, so its slots are
checking, judging and timing). The busy arm runs once per lock mode (``--locks``): ``timing`` (only timed
loops exclude each other) and ``phases`` (the default: checks, judges and warm-ups hold the device shared,
so no timing runs beside them), the search and the eval both under it. Each case's latency is the evaluator's
own median; the table gives, per kind, the median over rounds of each case, each busy arm over alone, the
spread over rounds, and the eval's own wait for the lock. Kinds go round-robin inside each round, and the
results are rewritten after every round, so a run cut short by ``--deadline`` still covers every kind.

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
import shutil
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


def _ke(*args: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelevolve.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **env})


def _draft(spec: str, hw: str, folder: Path) -> Path:
    """The offline operator's first draft of ``spec`` for ``hw``: a fixed kernel both arms time."""
    sys.path.insert(0, str(ROOT))
    from kernelevolve.lowering import lower_spec

    path = folder / f"{Path(spec).stem}_draft.py"
    path.write_text(lower_spec(spec, hw), encoding="utf-8")
    return path


def _eval(spec: str, kernel: Path, hw: str, state: Path, env: dict[str, str]) -> dict[str, Any]:
    """One ``ke eval`` of the fixed kernel: each case's median latency, and the lock wait of its phases."""
    done = _ke("eval", "--op", spec, "--hw", hw, str(kernel), "--json", "--state-dir", str(state), env=env)
    if done.returncode != 0:
        raise SystemExit(f"ke eval failed: {done.stderr.strip().splitlines()[-1:]}")
    verdict = json.loads(done.stdout)
    if verdict["status"] != "ok":
        raise SystemExit(f"the fixed kernel of {spec} is {verdict['status']}: {verdict['reason']}")
    phases = (verdict.get("extra") or {}).get("phases") or {}
    return {"cases": {c["name"]: c["latency_ms"] for c in verdict["cases"] if c.get("latency_ms")},
            "lock_wait_s": phases.get("lock_wait", 0.0)}


def _start_search(spec: str, hw: str, state: Path, env: dict[str, str], baselines: Path) -> subprocess.Popen:
    """An 8-slot search of ``spec`` on the same GPU, returned once its first node is stored.

    It starts with the alone eval's cached compile baselines (``baselines``), so each round's search does not
    compile the same Inductor baselines again before its first node: that only made rounds longer."""
    log = state / "search.log"
    state.mkdir(parents=True, exist_ok=True)
    if baselines.is_dir():
        shutil.copytree(baselines, state / "baselines", dirs_exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "kernelevolve.cli.main", "search", "--op", spec, "--hw", hw,
                             "--strategy", "random", "--budget", "400", "--concurrency", "8", "--executor", "local",
                             "--no-reuse", "--state-dir", str(state)], cwd=ROOT, stdout=open(log, "w"),
                            stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **env})
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


def one_round(kind: str, spec: str, kernel: Path, hw: str, locks: list[str], work: Path, r: int) -> dict[str, Any]:
    """Alone, then busy under each lock mode: the search and the timed eval both run with ``KE_GPU_LOCK``."""
    row = {"alone": _eval(spec, kernel, hw, work / f"{kind}_eval", {"KE_GPU_LOCK": "phases"})}  # uncontended
    for lock in locks:
        env = {"KE_GPU_LOCK": lock}
        search = _start_search(spec, hw, work / f"{kind}_search_{lock}_{r}", env, work / f"{kind}_eval" / "baselines")
        try:
            row[f"busy_{lock}"] = _eval(spec, kernel, hw, work / f"{kind}_eval", env)
        finally:
            _stop(search)
    return row


def summarize(kind: str, spec: str, kernel: Path, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case: the median over rounds of each arm, each busy arm over alone, and the spreads."""
    arms = [a for a in rounds[0] if a != "alone"]
    cases: dict[str, Any] = {}
    for name in rounds[0]["alone"]["cases"]:
        a = [x["alone"]["cases"][name] for x in rounds]
        case = {"alone_ms": statistics.median(a), "alone_range_ms": [min(a), max(a)]}
        for arm in arms:
            b = [x[arm]["cases"][name] for x in rounds]
            paired = [y / x for x, y in zip(a, b, strict=True)]  # each round's busy against that round's alone
            case[arm] = {"ms": statistics.median(b), "range_ms": [min(b), max(b)],
                         "over_alone": statistics.median(b) / statistics.median(a),
                         "paired": statistics.median(paired), "paired_range": [min(paired), max(paired)]}
        cases[name] = case
    waits = {arm: statistics.median(x[arm]["lock_wait_s"] for x in rounds) for arm in rounds[0]}
    return {"kind": kind, "spec": spec, "kernel": str(kernel), "rounds": len(rounds), "arms": arms,
            "median_lock_wait_s": waits, "cases": cases, "raw": rounds}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Timing alone and beside an 8-slot search ({report['gpu']})", "",
             f"{report['date']}, torch {report['torch']}, triton {report['triton']}, commit {report['commit']}.", "",
             f"Command: `{report['command']}`", ""]
    if report.get("prior"):
        p = report["prior"]
        lines += [f"The first {max(p['rounds'].values())} rounds of each kind are an earlier run's ({p['date']}, "
                  f"commit {p['commit']}: `{p['command']}`); the rest are this run's.", ""]
    lines += [
             "Each cell: the median over rounds of the evaluator's per-case median latency (ms), with the range over "
             "rounds; `busy_X` ran beside an 8-slot search of the same problem with `KE_GPU_LOCK=X` in both.", "",
             "| kind | case | rounds | alone ms (range) | busy arm | busy ms (range) | busy / alone "
             "| per round: median (range) | lock wait s |",
             "|---|---|---|---|---|---|---|---|---|"]
    worst: dict[str, float] = {}
    for row in report["kinds"]:
        for name, c in row["cases"].items():
            lo, hi = c["alone_range_ms"]
            for arm in row["arms"]:
                b = c[arm]
                blo, bhi = b["range_ms"]
                slow, fast = worst.get(arm, (0.0, 0.0))
                worst[arm] = (max(slow, b["over_alone"] - 1.0), max(fast, 1.0 - b["over_alone"]))
                lines.append(f"| {row['kind']} | {name} | {row['rounds']} | {c['alone_ms']:.4f} ({lo:.4f}-{hi:.4f}) "
                             f"| {arm} | {b['ms']:.4f} ({blo:.4f}-{bhi:.4f}) | {b['over_alone']:.3f} | "
                             f"{b['paired']:.3f} ({b['paired_range'][0]:.3f}-{b['paired_range'][1]:.3f}) | "
                             f"{row['median_lock_wait_s'][arm]:.2f} |")
    lines.append("")
    for arm, (slow, fast) in worst.items():  # a neighbour can only slow a timing; faster is the GPU's own state
        lines.append(f"- `{arm}`: the largest slowdown against alone is {slow * 100:.1f}% "
                     f"({'within' if slow <= 0.02 else 'over'} the 2% asked); the largest speedup {fast * 100:.1f}% "
                     "(a neighbour cannot speed a timing up: compare alone's range over rounds).")
    if report.get("cut_short"):
        lines.append(f"- Cut short by the deadline: {report['cut_short']}.")
    return "\n".join(lines) + "\n"


def _write(report: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    out.with_suffix(".md").write_text(markdown(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hw", default="h100")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kinds", default="softmax,block,big")
    parser.add_argument("--big", help="a spec with multi-GB inputs and outputs (the 'big' kind)")
    parser.add_argument("--locks", default="timing,phases",
                        help="KE_GPU_LOCK modes to run the busy arm under, each in every round")
    parser.add_argument("--deadline", type=float, default=0, help="seconds; start no round after it (0: none)")
    parser.add_argument("--out", type=Path, required=True, help="path prefix of the .json and .md to write")
    parser.add_argument("--prior", type=Path,
                        help="an earlier run's .json whose rounds come first (the same kinds and lock modes)")
    args = parser.parse_args()
    import torch
    import triton

    kinds = dict(KINDS)
    if args.big:
        kinds["big"] = (args.big, None)
    chosen = [k for k in args.kinds.split(",") if k]
    for kind in chosen:
        if kind not in kinds:
            raise SystemExit(f"unknown kind '{kind}' (known: {', '.join(kinds)}; 'big' needs --big)")
    locks = [x for x in args.locks.split(",") if x]
    work = Path(tempfile.mkdtemp(prefix="ke-isolation-"))
    kernels = {k: kinds[k][1] or _draft(kinds[k][0], args.hw, work) for k in chosen}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    report: dict[str, Any] = {
        "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else args.hw,
        "torch": torch.__version__, "triton": triton.__version__,
        "commit": os.environ.get("KE_COMMIT") or commit.stdout.strip(),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(["python3", *sys.argv]), "kinds": []}
    rounds: dict[str, list[dict[str, Any]]] = {k: [] for k in chosen}
    if args.prior:  # rounds of an earlier run, kept apart in the report by their commit
        prior = json.loads(args.prior.read_text())
        for row in prior["kinds"]:
            if row["kind"] in rounds:
                rounds[row["kind"]] = list(row["raw"])
        report["prior"] = {"path": str(args.prior), "commit": prior["commit"], "date": prior["date"],
                           "command": prior["command"], "rounds": {k: len(v) for k, v in rounds.items()}}
    started = time.monotonic()
    for r in range(args.rounds):  # kinds round-robin inside each round: a cut-short run still has every kind
        if args.deadline and time.monotonic() - started > args.deadline:
            report["cut_short"] = f"{r} of {args.rounds} rounds in {time.monotonic() - started:.0f} s"
            break
        for kind in chosen:
            rounds[kind].append(one_round(kind, kinds[kind][0], kernels[kind], args.hw, locks, work, r))
            print(f"{kind} round {r + 1}/{args.rounds}: {json.dumps(rounds[kind][-1])}", flush=True)
        report["kinds"] = [summarize(k, kinds[k][0], kernels[k], rounds[k]) for k in chosen]
        _write(report, args.out)
    print(markdown(report))


if __name__ == "__main__":
    main()
