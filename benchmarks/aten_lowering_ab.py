"""The ATen suite's drafts before and after a lowering change, from ``ke aten-sweep`` matrices of one GPU.

Why: issue #32 moves the suite's drafts from its own template engine to the general lowering, and asks that a
GPU run show no loss beyond noise. Each round runs both sweeps on the same warm card, in the order A B, then
B A in the next round (``per_gpu_session.sh``, ``JOB=aten``), so drift of the card falls on both. Per op and
case the ratio is new latency / old latency (> 1: the new draft is slower), taken as the median over rounds;
each sweep also re-times eager and ``torch.compile``, so the per-round ratio of eager times says how much of a
difference is the card's. Verdicts are kept: an op that is correct in one version only is listed apart.

Run (repo root): ``python3 benchmarks/aten_lowering_ab.py --old a1.json a2.json --new b1.json b2.json
--out benchmarks/results/aten_lowering_merge_h100``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any


def _rows(matrix: dict[str, Any]) -> list[dict[str, Any]]:
    """A matrix's rows: ``ops`` of an ATen sweep, ``rows`` of a KernelBench sweep (``ke sweep``; ``op`` names
    the problem there too)."""
    return matrix["ops"] if "ops" in matrix else matrix["rows"]


def _cases(matrix: dict[str, Any]) -> dict[tuple[str, str], dict[str, float]]:
    """(op, case) -> the best correct node's latency and that sweep's eager and compile times."""
    out = {}
    for row in _rows(matrix):
        if not row.get("correct"):
            continue
        for case in row.get("cases") or []:
            if case.get("latency_ms"):
                out[(row["op"], case["name"])] = {k: case.get(f"{k}_ms") for k in ("latency", "eager", "compile")}
    return out


def _geomean(values: list[float]) -> float | None:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def compare(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, Any]:
    old_c, new_c = [_cases(m) for m in old], [_cases(m) for m in new]
    keys = sorted(set.intersection(*(set(c) for c in old_c + new_c)))
    rows = []
    for key in keys:
        ratios = [n[key]["latency"] / o[key]["latency"] for o, n in zip(old_c, new_c, strict=True)]
        eager = [n[key]["eager"] / o[key]["eager"] for o, n in zip(old_c, new_c, strict=True)
                 if n[key]["eager"] and o[key]["eager"]]
        rows.append({"op": key[0], "case": key[1], "ratio": statistics.median(ratios),
                     "spread": [min(ratios), max(ratios)], "eager_ratio": statistics.median(eager) if eager else None,
                     "old_ms": statistics.median(o[key]["latency"] for o in old_c),
                     "new_ms": statistics.median(n[key]["latency"] for n in new_c),
                     "compile_ms": statistics.median(n[key]["compile"] for n in new_c if n[key]["compile"])})
    correct = {label: [sum(1 for r in _rows(m) if r.get("correct")) for m in ms]
               for label, ms in (("old", old), ("new", new))}
    only_old = sorted({r["op"] for r in _rows(old[0]) if r.get("correct")} - {r["op"] for r in _rows(new[0])
                                                                              if r.get("correct")})
    only_new = sorted({r["op"] for r in _rows(new[0]) if r.get("correct")} - {r["op"] for r in _rows(old[0])
                                                                              if r.get("correct")})
    ratios = [r["ratio"] for r in rows]
    eagers = [r["eager_ratio"] for r in rows if r["eager_ratio"]]
    return {"rounds": len(old), "correct": correct, "correct_in_old_only": only_old, "correct_in_new_only": only_new,
            "cases": len(rows), "geomean_new_over_old": _geomean(ratios),
            "geomean_eager_new_over_old": _geomean(eagers),
            "slower_10pct": sum(r > 1.10 for r in ratios), "faster_10pct": sum(r < 1 / 1.10 for r in ratios),
            "rows": rows}


def markdown(result: dict[str, Any], header: dict[str, Any]) -> str:
    lines = [f"# {header['what']} drafts: {header['old_label']} against {header['new_label']} ({header['device']})", "",
             f"{header['date']}, {header['device']}, torch {header['torch']}, triton {header['triton']}. "
             f"Command: `{header['command']}`.", "",
             f"- rounds: {result['rounds']} (each round both sweeps back to back on one card, the order swapped "
             "every round)",
             f"- correct (per round): old {result['correct']['old']}, new {result['correct']['new']}; correct in the "
             f"old only: {', '.join(result['correct_in_old_only']) or 'none'}; in the new only: "
             f"{', '.join(result['correct_in_new_only']) or 'none'}",
             f"- **geomean new / old latency over {result['cases']} cases: {result['geomean_new_over_old']:.3f}** "
             f"(eager's own new / old over the same cases, the card's drift: "
             f"{result['geomean_eager_new_over_old']:.3f})",
             f"- cases more than 10% slower: {result['slower_10pct']}; more than 10% faster: {result['faster_10pct']}",
             "", "| op | case | old ms | new ms | new / old (spread) | eager new / old | new vs compile |",
             "|---|---|---|---|---|---|---|"]
    for r in sorted(result["rows"], key=lambda r: -r["ratio"]):
        vs = f"{r['compile_ms'] / r['new_ms']:.2f}x" if r["compile_ms"] else "-"
        lines.append(f"| {r['op']} | {r['case']} | {r['old_ms']:.4f} | {r['new_ms']:.4f} | {r['ratio']:.3f} "
                     f"({r['spread'][0]:.3f}-{r['spread'][1]:.3f}) | {r['eager_ratio'] or 0:.3f} | {vs} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", nargs="+", required=True, help="the baseline's sweep matrices (.json), one a round")
    parser.add_argument("--new", nargs="+", required=True, help="the change's sweep matrices, in the same rounds")
    parser.add_argument("--labels", default="template engine,general lowering")
    parser.add_argument("--command", default="")
    parser.add_argument("--out", required=True, help="output path without suffix (.json and .md are written)")
    args = parser.parse_args()
    old = [json.loads(Path(p).read_text()) for p in args.old]
    new = [json.loads(Path(p).read_text()) for p in args.new]
    if len(old) != len(new):
        parser.error("--old and --new need one matrix per round each")
    result = compare(old, new)
    gpu = next((r["gpu"] for r in _rows(new[0]) if r.get("gpu")), {})
    labels = args.labels.split(",")
    header = {"what": "ATen suite" if "ops" in new[0] else "KernelBench",
              "old_label": labels[0], "new_label": labels[1], "device": gpu.get("name", new[0].get("device")),
              "torch": gpu.get("torch", new[0].get("torch")), "triton": gpu.get("triton", new[0].get("triton")),
              "date": new[0].get("date"), "command": args.command,
              "old_commands": [m.get("command") for m in old], "new_commands": [m.get("command") for m in new]}
    Path(args.out).with_suffix(".json").write_text(json.dumps({**header, **result}, indent=1) + "\n")
    Path(args.out).with_suffix(".md").write_text(markdown(result, header))
    print(f"geomean new/old {result['geomean_new_over_old']:.3f} over {result['cases']} cases; "
          f"correct old {result['correct']['old']} new {result['correct']['new']}")


if __name__ == "__main__":
    main()
