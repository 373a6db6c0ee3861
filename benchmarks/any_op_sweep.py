"""The any-op sweep: every problem of the project's own corpus (benchmarks/any_op/) searched offline on one
target, as one resumable campaign, then a matrix per level. A thin caller of ``kernelevolve.api.sweep`` (what
``ke sweep`` runs, in this process), kept for its flags, which benchmarks/per_gpu_session.sh and
benchmarks/x2_session.sh use:

  python3 benchmarks/any_op_sweep.py --hw cpu --budget 4 --concurrency 2 --state-dir /tmp/anyop-cpu \
      --write benchmarks/results/any_op_cpu

is ``ke sweep benchmarks/any_op --hw cpu --budget 4 --concurrency 2 --timeout 300 --executor local
--state-dir /tmp/anyop-cpu --out benchmarks/results/any_op_cpu --name any-op@cpu-b4``. The campaign keeps the
name this script always gave it, so a state made by an earlier version resumes. Running it again resumes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "any_op"


def sweep_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``kernelevolve.api.sweep`` arguments these flags mean (``ke sweep``'s options of the same names)."""
    if args.merge:
        return {"paths": [str(p) for p in args.merge], "merge": True, "out": args.write}
    name = f"any-op@{args.hw}-b{args.budget}" + (f"-{args.only}" if args.only else "")
    return {"paths": [str(args.corpus)], "hw": args.hw, "budget": args.budget, "concurrency": args.concurrency,
            "timeout_s": args.timeout, "executor": "local", "state_dir": str(args.state_dir), "name": name,
            "only": args.only, "shard": args.shard, "out": args.write, "matrix_only": args.matrix_only}


class LineProgress:
    """``ke sweep``'s progress as a log sees it (no terminal): one line per node on stderr, same wording."""

    def track(self, label: str, total: int, done: int = 0) -> Callable[..., None]:
        def update(node: Any, count: int, total_: int, best: Any) -> None:
            best_txt = f"best {best.fitness:.3f} (node {best.node_id})" if best else "no correct node yet"
            print(f"[{label}] {count}/{total_} node {node.node_id}: {node.status} {node.fitness:.3f} | {best_txt}",
                  file=sys.stderr, flush=True)

        return update

    def note(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def close(self) -> None:
        return None


def run(options: dict[str, Any]) -> int:
    """The sweep, printed and ended as ``ke sweep`` ends it: one line and exit 2 for bad input, 1 for a failure
    or an unfinished sweep, 130 when interrupted (run it again to resume), else 0."""
    from kernelevolve import interrupts
    from kernelevolve.api import sweep
    from kernelevolve.api.sweeps import summary_lines
    from kernelevolve.errors import RunFailed, StoreFailure, UserError

    def fail(message: object, code: int) -> int:
        print(f"ke: error: {' '.join(str(message).split()) or 'error'}", file=sys.stderr)
        return code

    with interrupts.handled(process=False):
        try:
            result = sweep(**options, progress=LineProgress)
        except KeyboardInterrupt:
            return fail("interrupted; run it again to resume", interrupts.EXIT_CODE)
        except UserError as exc:
            return fail(exc, 2)
        except (RunFailed, StoreFailure) as exc:
            return fail(exc, 1)
    for line in summary_lines(result):
        print(line)
    return 0 if options.get("merge") or result["finished"] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hw", default="cpu")
    parser.add_argument("--budget", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0, help="per-phase evaluation timeout (s)")
    parser.add_argument("--only", default=None, help="comma-separated globs over 'levelN/stem'")
    parser.add_argument("--corpus", type=Path, default=CORPUS,
                        help="a folder of level*/ problem files (default: the project's own corpus); e.g. a copy "
                             "of ../shared/kernelbench, read as data")
    parser.add_argument("--state-dir", type=Path)
    parser.add_argument("--write", default=None, help="output prefix for .json and .md")
    parser.add_argument("--matrix-only", action="store_true", help="rebuild the matrix from the store, run nothing")
    parser.add_argument("--shard", default=None, help="i/n: this sweep's share of the problems (one per GPU)")
    parser.add_argument("--merge", nargs="+", type=Path, help="shard reports (.json) to join; runs nothing")
    args = parser.parse_args()
    if not args.merge and args.state_dir is None:
        parser.error("--state-dir is required unless --merge is given")
    sys.path.insert(0, str(ROOT))  # a device's copy of the tree, run with PYTHONPATH naming only the wheels
    return run(sweep_options(args))


if __name__ == "__main__":
    sys.exit(main())
