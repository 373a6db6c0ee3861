"""One candidate from several drafts of one reference, each traced on the cases of one input structure.

Why: a trace fixes each tensor's dtype and rank and which dims are 0 or 1 (``trace.structure``). A spec whose
cases differ in those, such as an ATen op checked on fp16 rows, int32 vectors, a row broadcast and an empty
tensor, gets one draft per structure, lowered with one name counter so that no kernel or tunable collides,
and a forward that picks the draft by the inputs' structure. Identical kernels of two drafts are merged
(``dedupe``), so a structure that changes only the host code costs no second compile.
"""

from __future__ import annotations

import copy
from typing import Any

from kernelevolve.lowering.assemble import family_summary, module_text, pin_guard
from kernelevolve.lowering.dedupe import dedupe_kernels
from kernelevolve.lowering.trace import Traced

# Run-time twin of trace.structure: a test checks that both give the same key on every case of a spec.
STRUCTURE = '''def _structure(*args):
    """Each tensor's dtype and its sizes where 0 or 1 (-1: any other), and every other argument's value."""
    return tuple((str(a.dtype), tuple(int(s) if s <= 1 else -1 for s in a.shape)) if isinstance(a, torch.Tensor)
                 else repr(a) for a in args)'''
_SENTINEL = "#-- next draft --#"


def lower_variants(variants: list[tuple[tuple[Any, ...], Traced]], name: str, interpreter: bool,
                   nvidia: bool) -> str:
    """The candidate whose forward runs the draft lowered for its inputs' structure."""
    from kernelevolve.lowering.lower import lower_graph

    names: dict[str, int] = {}
    ctxs = [lower_graph(traced, interpreter=interpreter, nvidia=nvidia, names=names) for _, traced in variants]
    guards = [pin_guard(ctx) for ctx in ctxs]
    merged = copy.copy(ctxs[0])
    merged.kernels = [k for ctx in ctxs for k in ctx.kernels]
    merged.tunables = [t for ctx in ctxs for t in ctx.tunables]
    merged.forward = [line for ctx in ctxs for line in [*ctx.forward, _SENTINEL]]
    launches = dedupe_kernels(merged)
    bodies = "\n".join(merged.forward).split(_SENTINEL)[:-1]
    args = merged.traced.arg_names or merged.traced.user_inputs
    methods = [_dispatch(args, len(ctxs))]
    for i, (guard, body) in enumerate(zip(guards, bodies, strict=True)):
        lines = [*guard, *body.strip("\n").split("\n")]
        methods.append(f"    def _draft{i}({', '.join(['self', *args])}):\n"
                       + "\n".join(f"        {line}" if line else "" for line in lines))
    keys = "\n".join(f"    {key!r}," for key, _ in variants)
    host = f"{STRUCTURE}\n\n\n# the input structure each draft was traced for (_draftN serves _DRAFT_KEYS[N])\n" \
           f"_DRAFT_KEYS = [\n{keys}\n]"
    summary = f"{family_summary(merged.kernels)}; {len(ctxs)} drafts, one per input structure"
    return module_text(merged, name, summary, launches, "\n\n".join(methods), host)


def _dispatch(args: list[str], count: int) -> str:
    call = ", ".join(args)
    lines = [f"    def forward({', '.join(['self', *args])}):", f"        key = _structure({call})"]
    for i in range(count):
        lines += [f"        if key == _DRAFT_KEYS[{i}]:", f"            return self._draft{i}({call})"]
    lines.append('        raise ValueError(f"no draft was lowered for inputs of structure {key}")')
    return "\n".join(lines)

