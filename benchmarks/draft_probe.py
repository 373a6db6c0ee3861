"""Lowering drafts of chosen any_op problems against eager and a static torch.compile, on one CUDA device.

A quick look at what the lowering's first draft gives on a GPU before a whole sweep spends its budget: for
each problem, the NVIDIA draft and variants of it (tunables rewritten, e.g. every ``*_TF32X3`` to 0 for IEEE
dots) are checked against the eager reference on the production case (fixed tolerance, then the float64
second opinion for fp32, as the judge does) and timed interleaved with eager and compile (L2 flushed,
medians and IQRs: evaluators/timing.py), each call on freshly written inputs as the evaluator times them
(evaluators/fresh_inputs.py). This is not the search: no screening, one case, one seed.

``--rule-ab`` also times every callable the old way, on one input reused unwritten, alternating the two
rules over ``--rounds`` rounds in the same run: how much the fresh-input rule itself moves honest timings.

Run (repo root, GPU host): ``PYTHONPATH=$PWD python3 benchmarks/draft_probe.py --only 'level1/0[1-4]*'
--variant ieee:TF32X3=0 --extra old:DRAFTS --out probe.json`` (``--dir`` reads another folder of problems);
``--extra`` times drafts lowered elsewhere (an older commit's, named ``levelN_stem.py``) in the same
interleaved run. Rows are written as each
problem finishes.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

CORPUS = Path(__file__).parent / "any_op"


def variant_source(source: str, overrides: dict[str, int]) -> str:
    """The draft with every tunable whose name ends in an override's key set to its value."""
    from kernelevolve.operators.tunables import find_tunables, rewrite

    changes = {t: v for t in find_tunables(source) for key, v in overrides.items() if t.name.endswith(key)}
    return rewrite(source, changes)


def check(spec, reference, candidate, inputs) -> tuple[bool, float]:
    """(passes the judge's tolerance rules, max abs error) on one case."""
    from evaluators.candidate import flatten_outputs
    from evaluators.correctness import compare
    from evaluators.exactness import as_exact_as_reference, as_float64

    with torch.no_grad():
        got = [g.contiguous() for g in flatten_outputs(candidate(*inputs))]
        want = flatten_outputs(reference(*inputs))
    ok, worst, _ = compare(got, want, spec)
    if not ok and any(w.dtype == torch.float32 for w in want):
        with torch.no_grad():
            exact = flatten_outputs(reference.double()(*as_float64(inputs)))
        reference.float()
        ok = as_exact_as_reference(got, want, exact, spec)
    return ok, float(worst)


def probe(path: Path, hw: str, variants: dict[str, dict[str, int]], extra: dict[str, Path] | None = None,
          rule_ab: bool = False, rounds: int = 2) -> dict:
    from evaluators.candidate import build_pair, load_candidate_class
    from evaluators.correctness import FRESH_SEED_OFFSET, make_inputs
    from evaluators.fresh_inputs import FreshInputs
    from evaluators.performance import static_compile
    from evaluators.spec import load_spec
    from kernelevolve.lowering import lower_spec

    spec = load_spec(path)
    draft = lower_spec(path, hw)
    inputs = make_inputs(spec, "prod", "cuda", 0)["case0"]
    rotation = FreshInputs(inputs, make_inputs(spec, "prod", "cuda", FRESH_SEED_OFFSET)["case0"])
    fns, row = {}, {"problem": f"{path.parent.name}/{path.stem}", "variants": {}}
    reference = None
    with tempfile.TemporaryDirectory(prefix="ke-probe-") as tmp:
        sources = {"draft": draft}
        for name, overrides in variants.items():
            text = variant_source(draft, overrides)
            if text != draft:  # a variant that changes nothing here is not timed twice
                sources[name] = text
        for name, folder in (extra or {}).items():  # drafts lowered elsewhere, e.g. by an older commit
            other = folder / f"{path.parent.name}_{path.stem}.py"
            if other.is_file() and not other.read_text(encoding="utf-8").startswith("ERR"):
                sources[name] = other.read_text(encoding="utf-8")
        for name, text in sources.items():
            file = Path(tmp) / f"{name}.py"
            file.write_text(text, encoding="utf-8")
            try:
                reference, candidate = build_pair(spec, load_candidate_class(file), 0, "cuda")
                ok, err = check(spec, reference, candidate, inputs)
            except Exception as exc:  # noqa: BLE001 - one variant's failure is a row, not the probe's end
                row["variants"][name] = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                continue
            row["variants"][name] = {"ok": ok, "max_abs_err": err}
            if ok:
                fns[name] = (lambda c=candidate: c(*inputs))
        if reference is None:
            return row
        compiled = static_compile(reference, inputs)
        every = {"eager": lambda: reference(*inputs), "compile": lambda: compiled(*inputs), **fns}
        timings, by_rule = time_rules(every, rotation, rule_ab, rounds)
    if rule_ab:
        row["rule_ab"] = by_rule
    row["eager_ms"], row["compile_ms"] = timings["eager"].median_ms, timings["compile"].median_ms
    for name in fns:
        t = timings[name]
        row["variants"][name].update(ms=t.median_ms, iqr_ms=t.iqr_ms,
                                     vs_eager=row["eager_ms"] / t.median_ms,
                                     vs_compile=row["compile_ms"] / t.median_ms)
    return row


def time_rules(fns: dict, rotation, rule_ab: bool, rounds: int) -> tuple[dict, dict]:
    """The fresh-input timings (the evaluator's rule), and with ``rule_ab`` each callable's median under both
    rules, the rules alternating over ``rounds`` (which goes first alternates too)."""
    import statistics

    from evaluators.timing import interleaved_timings

    samples: dict[str, dict[str, list[float]]] = {"fresh": {}, "reused": {}}
    last = None
    with torch.no_grad():
        for r in range(rounds if rule_ab else 1):
            order = ["fresh", "reused"] if r % 2 == 0 else ["reused", "fresh"]
            for rule in order if rule_ab else ["fresh"]:
                timings = interleaved_timings(fns, fresh=rotation if rule == "fresh" else None)
                for name, t in timings.items():
                    samples[rule].setdefault(name, []).extend(t.samples_ms)
                if rule == "fresh":
                    last = timings
    by_rule = {}
    if rule_ab:
        for name in fns:
            fresh, reused = statistics.median(samples["fresh"][name]), statistics.median(samples["reused"][name])
            by_rule[name] = {"fresh_ms": fresh, "reused_ms": reused, "fresh_over_reused": fresh / reused}
    return last, by_rule


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hw", default="h100")
    parser.add_argument("--only", required=True, help="comma-separated globs over 'levelN/stem'")
    parser.add_argument("--variant", action="append", default=[], help="NAME:SUFFIX=VALUE[,SUFFIX=VALUE]")
    parser.add_argument("--extra", action="append", default=[],
                        help="NAME:DIR: also time DIR/levelN_stem.py (a draft lowered elsewhere) as variant NAME")
    parser.add_argument("--out", required=True)
    parser.add_argument("--dir", default=str(CORPUS),
                        help="folder of levelN/*.py problems (default: the any-op corpus; e.g. ../shared/kernelbench)")
    parser.add_argument("--deadline-s", type=float, default=1e9, help="stop starting problems after this")
    parser.add_argument("--rule-ab", action="store_true", help="also time on one reused, unwritten input")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the two rules (--rule-ab)")
    args = parser.parse_args(argv)
    from evaluators.numerics import configure_numerics

    configure_numerics()
    variants = {}
    for text in args.variant:
        name, _, rest = text.partition(":")
        variants[name] = {k: int(v) for k, v in (item.split("=") for item in rest.split(","))}
    extra = {name: Path(folder) for name, _, folder in (text.partition(":") for text in args.extra)}
    globs = args.only.split(",")
    paths = [p for p in sorted(Path(args.dir).glob("level*/*.py"))
             if any(fnmatch.fnmatch(f"{p.parent.name}/{p.stem}", g) for g in globs)]
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "python": platform.python_version(),
              "command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": []}
    import triton

    result["triton"] = triton.__version__
    start = time.monotonic()
    for path in paths:
        if time.monotonic() - start > args.deadline_s:
            break
        try:
            row = probe(path, args.hw, variants, extra, args.rule_ab, args.rounds)
        except Exception as exc:  # noqa: BLE001
            row = {"problem": f"{path.parent.name}/{path.stem}", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        result["rows"].append(row)
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
        cells = " ".join(f"{n}={v.get('vs_compile', 0):.2f}x{'' if v.get('ok') else '(FAIL)'}"
                         for n, v in row.get("variants", {}).items())
        ab = " ".join(f"{n}:{v['fresh_over_reused']:.3f}" for n, v in row.get("rule_ab", {}).items())
        print(f"{row['problem']}: eager {row.get('eager_ms', 0):.3f} ms compile {row.get('compile_ms', 0):.3f} ms "
              f"{cells} {row.get('error', '')}" + (f" fresh/reused {ab}" if ab else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
