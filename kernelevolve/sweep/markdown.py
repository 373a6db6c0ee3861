"""A sweep's matrix as markdown: provenance, the field's figures per level beside published reference points,
the node tally, then a row per problem. The references say where each number comes from and under which
conditions; this project's sweep is offline (no LLM), theirs are not, which the page says next to them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kernelevolve.aten.matrix import floor_cell, floor_legend
from kernelevolve.sweep.metrics import THRESHOLDS, p_label

REFERENCES: list[dict[str, str]] = [
    {"system": "KernelAgent (Meta)", "source": "Meta's published KernelAgent results",
     "result": "100% correct on all 250 KernelBench problems; 1.56x geomean speedup over torch.compile on "
               "level 1, faster than torch.compile on 65 of 100 level-1 problems",
     "conditions": "H100, Triton kernels, written by an LLM"},
    {"system": "CUDA Agent", "source": "CUDA Agent (2026), published results",
     "result": "faster than torch.compile on 100% of level 1, 100% of level 2 and 92% of level 3",
     "conditions": "kernels written by an LLM"},
    {"system": "KernelEvolve (paper)", "source": "the KernelEvolve paper",
     "result": "100% correct on the 250 KernelBench problems", "conditions": "with an LLM"},
]


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _fast(level: dict[str, Any], baseline: str) -> str:
    """fast_0 / fast_1 / fast_1.5 / fast_2 in one cell; '-' where the level is untimed."""
    values = (level.get("fast_p") or {}).get(baseline) or {}
    return " / ".join(_pct(values.get(p_label(p))) for p in THRESHOLDS)


def _levels(report: dict[str, Any]) -> list[str]:
    ps = " / ".join(p_label(p) for p in THRESHOLDS)
    lines = [f"| level | correct | rate | goal | fast_p vs eager (p = {ps}) | fast_p vs compile (p = {ps}) | "
             "geomean vs eager | geomean vs compile | median of floor |", "|---|---|---|---|---|---|---|---|---|"]
    levels = dict(report.get("levels") or {})
    if report.get("overall") and len(levels) > 1:
        levels["all"] = report["overall"]
    for name, s in levels.items():
        floor = s.get("median_fraction_of_floor")
        lines.append(f"| {name} | {s['correct']}/{s['total']} | {_pct(s.get('rate'))} | {_pct(s.get('goal'))} | "
                     f"{_fast(s, 'eager')} | {_fast(s, 'compile')} | {_x(s.get('geomean_vs_eager'))} | "
                     f"{_x(s.get('geomean_vs_compile'))} | {'-' if floor is None else f'{floor:.2f}'} |")
    return lines


def _references() -> list[str]:
    lines = ["", "Published reference points (not comparable one to one: **this sweep is offline, no LLM**; the "
             "references below had an LLM write the kernels):", "",
             "| system | result | conditions | source |", "|---|---|---|---|"]
    lines += [f"| {r['system']} | {r['result']} | {r['conditions']} | {r['source']} |" for r in REFERENCES]
    return lines


def _tally(tally: dict[str, Any] | None) -> list[str]:
    if not tally:
        return []
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(tally["statuses"].items(), key=lambda x: -x[1]))
    lines = ["", f"**Nodes: {tally['nodes']}** ({statuses}). Lost to device memory: "
             f"{len(tally['lost'].get('out of memory', []))}; to the harness: {len(tally['lost'].get('harness', []))}."]
    for name, items in tally["lost"].items():
        lines += [f"- {name}: {item}" for item in items[:20]]
    return lines


def _provenance(report: dict[str, Any]) -> list[str]:
    """When, from which commit and by which command: one line, or one per run where runs were merged."""
    runs = report.get("runs") or []
    if len(runs) < 2:
        return [f"{report['date']}, commit {report['commit']}, {report['seconds']:.0f} s: `{report['command']}`"]
    superseded = report.get("superseded") or []
    return [f"Merged from {len(runs)} runs ({report['seconds']:.0f} s in all):", "",
            *(f"- `{run['only']}`, {run['date']}, commit {run['commit']}, {run['seconds']:.0f} s: "
              f"`{' ; '.join(run['commands'])}`" for run in runs),
            *([f"- {len(superseded)} problems ran in more than one of them; each row is from the last run given "
               f"(a re-run): {', '.join(superseded)}"] if superseded else [])]


def _what_speedups_are(report: dict[str, Any]) -> str:
    if any(row.get("simulated") for row in report["rows"]):
        return ("**Simulated: no kernel ran on the target.** Speedups are the simulator's estimates (a sample of "
                "each launch's programs interpreted at the published sizes and costed on the target's record) "
                "against PyTorch eager modelled op by op on meta tensors; there is no `torch.compile` baseline, "
                "and no correct-rate goal. Correctness is checked on the interpreter at the shrunk test sizes.")
    return ("Speedups are the best correct node's, from its final re-measurement (interleaved, L2 flushed, "
            "medians; compile = a static `torch.compile` per case); floor = minimal bytes / rated bandwidth or "
            "FLOPs / peak, whichever is larger.")


def markdown(report: dict[str, Any]) -> str:
    """The whole page; reads only what older reports (benchmarks/any_op_sweep.py's) also have, the rest if there."""
    device = report.get("device") or report["hw"]
    cards = Counter(str((row.get("gpu") or {}).get("name")) for row in report["rows"] if row.get("gpu"))
    if len(cards) > 1:  # a merge of runs on different cards: each row's ratios were measured on its own card
        device = "mixed, each row's ratios measured on its own card (" + ", ".join(
            f"{name}: {n} rows" for name, n in cards.most_common()) + ")"
    if report.get("torch"):
        device += f", torch {report['torch']}, triton {report.get('triton')}"
    lines = [f"# Problem sweep on {report['hw']} (offline operator, no LLM; budget {report['budget']}"
             + (f", {report['strategy']}" if report.get("strategy") else "") + ")", "",
             *_provenance(report), "",
             f"Device: {device}. {_what_speedups_are(report)} fast_p (KernelBench): the fraction of the level's "
             "problems that are correct and faster than the baseline by more than p; '-' where the target is "
             "untimed (the cpu interpreter checks correctness only).", "", *_levels(report), *_references(),
             *_tally(report.get("tally"))]
    search = [r for r in report["rows"] if r.get("measured") == "search"]
    unfinished = [r for r in search if r.get("run_status") != "completed"]
    if len(search) > len(unfinished):
        lines += ["", f"**{len(search) - len(unfinished)} finished runs had one correct node**, so nothing was "
                  "selected and there is no selection bias to re-measure away: their figures are that node's own "
                  "evaluation, marked `search` below."]
    if unfinished:
        lines += ["", f"**{len(unfinished)} of {len(report['rows'])} runs have no final re-measurement yet** "
                  "(stopped or still running): their figures are the best node's own search-time evaluation, "
                  "marked `search` below."]
    lines += ["", "| problem | status | nodes | measured | vs eager | vs compile | of floor | reason |",
              "|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        reason = " ".join(str(r.get("reason") or "").split())[:160].replace("|", "/")
        floor = floor_cell(r.get("fraction_of_floor") or None, r.get("floor_flag"))
        lines.append(f"| {r['op']} | {r['status']} | {r['nodes']} | {r.get('measured') or '-'} | "
                     f"{_x(r.get('speedup_vs_eager'))} | {_x(r.get('speedup_vs_compile'))} | {floor} | {reason} |")
    correct = sum(bool(r["correct"]) for r in report["rows"])
    legend = floor_legend(report["rows"])
    lines += ["", *legend, *([""] if legend else []), f"{correct}/{len(report['rows'])} correct"]
    return "\n".join(lines) + "\n"
