"""Which buffer of a lowered draft holds NaN: for a draft that the evaluator rejects with "NaN where the
reference has none (unwritten or invalid)". Fresh allocations are poisoned with NaN as the evaluator's guard
does, the draft's forward runs once at the problem's published size, and every floating-point local still
holding NaN when forward returns is listed in the order forward first assigned it, with the line that did.

    python3 benchmarks/nan_locate.py PROBLEM.py [--draft DRAFT.py] [--hw h100] [--device cuda]

On a CPU-only machine set TRITON_INTERPRET=1 (exact but slow: minutes for a whole network). A buffer that
is NaN on the GPU and not on the interpreter points at a race or a launch limit, not at a mask."""

from __future__ import annotations

import argparse
import dis
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import torch

from evaluators.candidate import build_pair, load_candidate_class
from evaluators.guard import ForwardGuard
from evaluators.spec import load_spec


def _assigning_lines(code: Any) -> dict[str, int]:
    """Local name -> the first source line of ``code`` that stores it."""
    first: dict[str, int] = {}
    line = code.co_firstlineno
    for ins in dis.get_instructions(code):
        if ins.positions and ins.positions.lineno:
            line = ins.positions.lineno
        if ins.opname == "STORE_FAST" and ins.argval not in first:
            first[ins.argval] = line
    return first


def locate(problem: Path, draft: Path, device: str) -> list[tuple[str, int, int, tuple[int, ...]]]:
    """(local, line, NaN count, shape) for each local holding NaN at forward's return, in assignment order.
    The pair is built and the forward guarded as the evaluator does (state copied by name, fresh
    allocations poisoned), on the published case."""
    spec = load_spec(problem)
    _, candidate = build_pair(spec, load_candidate_class(draft), seed=0, device=device)
    inputs = next(iter(spec.cases("prod", device).values()))
    kept: dict[str, torch.Tensor] = {}  # forward's float locals at its return, scanned once outside the guard
    forward_code = type(candidate).forward.__code__

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code is not forward_code:
            return None

        def on_event(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "return":
                kept.update((name, value) for name, value in frame.f_locals.items()
                            if isinstance(value, torch.Tensor) and value.is_floating_point())
            return on_event
        return on_event

    sys.settrace(on_call)
    started = time.monotonic()
    try:
        with torch.no_grad(), ForwardGuard(poison=True):
            candidate(*inputs)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    finally:
        sys.settrace(None)
    print(f"forward ran in {time.monotonic() - started:.1f} s", file=sys.stderr)
    found = {name: (int(torch.isnan(value).sum()), tuple(value.shape)) for name, value in kept.items()}
    found = {name: item for name, item in found.items() if item[0]}
    lines = _assigning_lines(forward_code)
    order = {name: i for i, name in enumerate(lines)}
    return [(name, lines.get(name, 0), count, shape)
            for name, (count, shape) in sorted(found.items(), key=lambda item: order.get(item[0], 1 << 30))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", type=Path)
    parser.add_argument("--draft", type=Path, help="a lowered draft; default: lower PROBLEM for --hw now")
    parser.add_argument("--hw", default="h100")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    draft = args.draft
    if draft is None:
        from kernelevolve.lowering import lower_spec

        draft = Path(f"/tmp/nan_locate_{args.problem.stem}_{args.hw}.py")
        draft.write_text(lower_spec(args.problem, args.hw), encoding="utf-8")
    rows = locate(args.problem, draft, args.device)
    for name, line, count, shape in rows:
        print(f"{draft}:{line}: {name} {list(shape)} has {count} NaN")
    if not rows:
        print("no local holds NaN when forward returns")
    return 1 if rows else 0


if __name__ == "__main__":
    sys.exit(main())
