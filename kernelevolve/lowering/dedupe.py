"""One kernel per distinct body: the launches of identical kernels share one definition and its tunables.

Why: a traced loop is unrolled. A cell applied step by step in Python (a hand-written RNN) lowers to a launch
per op per step, yet only a few distinct kernels (an unrolled 256-step, 2-layer LSTM: ~1,500 launches, 18
kernels); emitted one definition per launch, Triton compiles each of them (minutes, and past any per-phase
timeout) and the candidate's source runs to megabytes. ``nn.LSTM``-style layers are kept whole instead
(recurrence.py). Two kernels are merged only when their text
and their tunables' default values are the same once their names are set aside, so every launch keeps the
kernel and block sizes it had; the offline search then tunes one set of knobs per distinct kernel.
"""

from __future__ import annotations

import re

from kernelevolve.lowering.context import Context

_KERNEL_NAME = re.compile(r"@triton\.jit\s*\ndef (_[A-Za-z_]+\d+)\(")
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


def _tag(kernel: str) -> str:
    """The prefix of a kernel's tunables: ``_matmul3`` -> ``MATMUL3``."""
    return kernel.lstrip("_").upper()


def dedupe_kernels(ctx: Context) -> int:
    """Drop each kernel whose body and tunable defaults repeat an earlier one's, point its launches and
    tunables at that one in the forward, and return how many launches the kernels had before."""
    kept: list[str] = []
    first_of: dict[tuple[str, tuple[tuple[str, int], ...]], str] = {}
    renames: dict[str, str] = {}
    for text in ctx.kernels:
        match = _KERNEL_NAME.search(text)
        if match is None:
            kept.append(text)
            continue
        name, tag = match.group(1), _tag(match.group(1))
        knobs = tuple((n[len(tag):], v) for n, v, _ in ctx.tunables if n.startswith(tag + "_"))
        key = (re.sub(rf"\b{re.escape(name)}\b", "_KERNEL", text), knobs)
        if key not in first_of:
            first_of[key] = name
            kept.append(text)
            continue
        survivor = first_of[key]
        renames[name] = survivor
        renames.update({f"{tag}{suffix}": f"{_tag(survivor)}{suffix}" for suffix, _ in knobs})
    launches = len(ctx.kernels)
    if not renames:
        return launches
    ctx.kernels = kept
    ctx.tunables = [t for t in ctx.tunables if t[0] not in renames]
    forward = "\n".join(ctx.forward)
    forward = _IDENTIFIER.sub(lambda m: renames.get(m.group(0), m.group(0)), forward)
    ctx.forward = forward.split("\n")
    return launches
