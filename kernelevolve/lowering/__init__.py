"""Offline lowering of any PyTorch reference to one Triton candidate (issue #16).

``lower_spec(path)`` traces the spec's reference into core ATen ops (``trace.py``), lowers each op through
its template family (pointwise fusion, reductions, row ops such as softmax and layer norm, matmul, conv,
pooling) and assembles one ``TritonModel`` that passes the same checks as any candidate: its forward only
allocates, takes views and launches ``@triton.jit`` kernels. An op no family lowers raises
``LoweringError`` naming it.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelevolve.lowering.errors import LoweringError

if TYPE_CHECKING:
    from kernelevolve.lowering.trace import Traced

__all__ = ["LoweringError", "lower_spec", "lower_spec_text", "lower_traced", "lowering_version"]
# torch.export keeps its dispatch-mode stack per process, not per thread: two generation threads tracing at
# once (a campaign, or --concurrency > 1) corrupt each other's trace ("Trying to pop empty mode stack").
_TRACE_LOCK = threading.Lock()


_LOWERED: dict[tuple[str, str, str, bool], str] = {}  # (name, spec text's hash, target, per_structure) -> source
_LOWERED_LIMIT = 64


@functools.cache
def lowering_version() -> str:
    """A hash of this package's own source: a draft stored by an earlier run answers only for the lowering that
    wrote it (the ATen sweep re-runs an op whose lowering changed instead of reporting its old run), and
    hashing the code costs milliseconds where lowering all 160 suite ops to compare drafts costs minutes."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def lower_spec_text(name: str, spec_source: str, target: str = "", per_structure: bool = False) -> str:
    """``lower_spec`` for a spec held as text (a run stores its spec's text, not a path). Kept per process:
    ``ke search`` checks that a spec lowers before any executor starts, and the run then drafts from the same
    lowering (tracing a KernelBench file at its published sizes takes seconds). Failures are not kept."""
    import hashlib
    import tempfile

    key = (name, hashlib.sha256(spec_source.encode()).hexdigest(), target, per_structure)
    if key in _LOWERED:
        return _LOWERED[key]
    with tempfile.TemporaryDirectory(prefix="ke-lower-") as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(spec_source, encoding="utf-8")
        source = lower_spec(path, target, per_structure=per_structure)
    if len(_LOWERED) >= _LOWERED_LIMIT:
        _LOWERED.pop(next(iter(_LOWERED)))
    _LOWERED[key] = source
    return source


def lower_spec(spec_path: str | Path, target: str = "", symbolic: bool = False, per_structure: bool = False) -> str:
    """The source of a Triton candidate implementing the spec's reference; on the ``cpu`` target (Triton's
    CPU interpreter) block-size defaults are larger, since there each program step costs the same. A spec
    checked on a single case gets a draft for that case's sizes only; ``symbolic`` keeps it general.

    ``per_structure``: one draft per input structure of the cases (``variants.py``), for a spec whose cases
    differ in dtype, rank or broadcast on purpose (the ATen suite's). Off, one trace on a case covering them
    all, which serves the cases of most specs (a pointwise or row kernel does not care about an fp16 case
    beside an fp32 one) at a fraction of the tracing time."""
    from kernelevolve.lowering.decompositions import device_semantics
    from kernelevolve.lowering.trace import trace_spec, trace_variants
    from kernelevolve.lowering.variants import lower_variants

    try:
        with _TRACE_LOCK, device_semantics("gpu" if _is_gpu(target) else "cpu"):
            production, which = target not in ("", "cpu"), checked_cases(target)
            if not per_structure:
                return lower_traced(trace_spec(spec_path, production, which, symbolic), Path(spec_path).stem, target)
            variants = trace_variants(spec_path, production, which, symbolic)
            if len(variants) == 1:
                return lower_traced(variants[0][1], Path(spec_path).stem, target)
            return lower_variants(variants, Path(spec_path).stem, target == "cpu", _is_nvidia(target))
    except LoweringError:
        raise
    except Exception as exc:  # noqa: BLE001 - a gap in a template is one line for the user, not a crash
        text = " ".join(str(exc).split())[:200]
        raise LoweringError(f"the lowering failed: {type(exc).__name__}: {text}") from exc


def _record(target: str) -> Any:
    """The target's record, or None for the interpreter (no target, ``cpu``) or an unknown name: one read of the
    targets folder for each question below."""
    if target in ("", "cpu"):
        return None
    from interpreters.targets import load_targets

    return load_targets().get(target)


def checked_cases(target: str) -> str:
    """The case set ``target`` checks candidates on (``Target.checked_cases``; a GPU target is drafted for as
    it runs, not as ``--simulate`` would check it: there a size fixed at production fails in one line, see
    assemble._pin_guard). No target: the interpreter's ``test``."""
    found = _record(target)
    return found.checked_cases(found.always_simulated) if found else "test"


def _is_gpu(target: str) -> bool:
    """Whether the target's reference runs on a GPU (NVIDIA or AMD): ATen's results differ by device in places
    (``decompositions.device_semantics``), and the draft must match the device its reference runs on."""
    found = _record(target)
    return bool(found and found.vendor in ("nvidia", "amd") and not found.always_simulated)


def _is_nvidia(target: str) -> bool:
    """Whether the target is an NVIDIA GPU, whose drafts run fp32 dots on tensor cores (lowering/dots.py)."""
    found = _record(target)
    return bool(found and found.vendor == "nvidia")


def lower_traced(traced: Traced, name: str, target: str = "") -> str:
    """The candidate for an already traced reference (``trace.trace_spec``)."""
    from kernelevolve.lowering.assemble import assemble, family_summary
    from kernelevolve.lowering.lower import lower_graph

    ctx = lower_graph(traced, interpreter=target == "cpu", nvidia=_is_nvidia(target))
    return assemble(ctx, name, family_summary(ctx.kernels))
