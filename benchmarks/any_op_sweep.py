"""The any-op sweep: every problem of the project's own corpus (benchmarks/any_op/) searched offline on one
target, as one resumable campaign, then a matrix per level. A thin caller of ``ke sweep`` (in this process),
kept for its flags, which benchmarks/per_gpu_session.sh and benchmarks/x2_session.sh use:

  python3 benchmarks/any_op_sweep.py --hw cpu --budget 4 --concurrency 2 --state-dir /tmp/anyop-cpu \
      --write benchmarks/results/any_op_cpu

is ``ke sweep benchmarks/any_op --hw cpu --budget 4 --concurrency 2 --timeout 300 --executor local
--state-dir /tmp/anyop-cpu --out benchmarks/results/any_op_cpu --name any-op@cpu-b4``. The campaign keeps the
name this script always gave it, so a state made by an earlier version resumes. Running it again resumes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "any_op"


def ke_args(args: argparse.Namespace) -> list[str]:
    """The ``ke sweep`` command line these flags mean."""
    if args.merge:
        return ["sweep", "--merge", *map(str, args.merge), *(["--out", args.write] if args.write else [])]
    name = f"any-op@{args.hw}-b{args.budget}" + (f"-{args.only}" if args.only else "")
    argv = ["sweep", str(args.corpus), "--hw", args.hw, "--budget", str(args.budget), "--concurrency",
            str(args.concurrency), "--timeout", str(args.timeout), "--executor", "local", "--state-dir",
            str(args.state_dir), "--name", name]
    for flag, value in (("--only", args.only), ("--shard", args.shard), ("--out", args.write)):
        if value:
            argv += [flag, value]
    return argv + (["--matrix-only"] if args.matrix_only else [])


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
    from kernelevolve.cli.main import main as ke

    return ke(ke_args(args))


if __name__ == "__main__":
    sys.exit(main())
