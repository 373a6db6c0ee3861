"""Counting what a Triton kernel does, by instrumenting Triton's CPU interpreter.

Per program: loads and stores (bytes of active lanes, attributed to the argument buffer they touch),
``tl.dot`` FLOPs, other floating-point work, and the number of load instructions (a dependent chain the
hardware must wait on). Only a sample of each grid's programs is interpreted: counts are extrapolated,
which is what keeps a production-size case to seconds (docs/architecture.md §5). Outputs are therefore garbage:
correctness is always checked by a separate, complete interpretation.
"""

from __future__ import annotations

import bisect
import inspect
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_SAMPLED_PROGRAMS = 24
# Interpreted steps (instrumented builder calls) a launch's sample may cost: past it, fewer programs are
# sampled, still spread over the grid with the last one kept. One long-K matmul program of a published-size
# problem is ~15k steps (~4 s on the interpreter); 24 of them per launch made one simulation 90 s.
STEP_BUDGET = 40_000
MIN_SAMPLED_PROGRAMS = 2
LINE_BYTES = 128
_INT_OPS = ("create_add", "create_sub", "create_mul", "create_addptr", "create_and", "create_or", "create_xor",
            "create_select", "create_shl", "create_lshr", "create_ashr", "create_sdiv", "create_srem",
            "create_udiv", "create_urem", "create_icmpSLT", "create_icmpSGE", "create_icmpSLE", "create_icmpSGT",
            "create_icmpEQ", "create_icmpNE", "create_icmpULT", "create_icmpUGE")
# FLOP-equivalents per element: special functions and divides run on slower units (about 4x an FMA's cost).
_FLOAT_OPS = {"create_fadd": 1, "create_fsub": 1, "create_fmul": 1, "create_fdiv": 4, "create_fma": 2,
              "create_exp": 4, "create_exp2": 4, "create_log": 4, "create_log2": 4, "create_sqrt": 4,
              "create_rsqrt": 4, "create_precise_sqrt": 4, "create_precise_divf": 4, "create_approx_divf": 2,
              "create_sin": 4, "create_cos": 4, "create_erf": 4, "create_maximumf": 1, "create_minimumf": 1,
              "create_fneg": 1, "create_fabs": 1, "create_extern_elementwise": 4}


@dataclass
class ProgramCounts:
    load_bytes: dict[int, float] = field(default_factory=dict)  # buffer index -> bytes
    store_bytes: dict[int, float] = field(default_factory=dict)
    load_ops: int = 0
    dot_flops: float = 0.0
    alu_flops: float = 0.0
    max_load_bytes: float = 0.0  # the widest single load: bytes one program has in flight at once
    dot_dtype: str = ""
    int_ops: float = 0.0  # index and pointer arithmetic, masks, selects
    max_tensor_elems: float = 0.0  # the largest value a program holds: register pressure
    lines: dict[int, set[int]] = field(default_factory=dict)  # 128-byte lines each buffer's loads touched
    steps: int = 0  # instrumented interpreter calls: what interpreting this program cost

    @property
    def unique_load_bytes(self) -> dict[int, float]:
        """Bytes of distinct lines loaded per buffer: re-reads inside one program are reuse at short range."""
        return {buf: min(len(lines) * LINE_BYTES, self.load_bytes.get(buf, 0.0)) for buf, lines in self.lines.items()}


@dataclass
class LaunchCounts:
    """One kernel launch: the grid, its buffers and per-program averages over the sampled programs."""

    kernel: str
    programs: int
    num_warps: int
    num_stages: int
    knobs: dict[str, Any]
    buffer_bytes: list[float]
    sampled: list[ProgramCounts] = field(default_factory=list)

    def mean(self, attr: str) -> float:
        return float(np.mean([getattr(p, attr) for p in self.sampled])) if self.sampled else 0.0

    def weights(self) -> list[float]:
        """How many programs each sampled one stands for: the last (often partial) program stands for
        itself, the others share the rest of the grid evenly."""
        n = len(self.sampled)
        if n == 0:
            return []
        if n >= self.programs or n == 1:
            return [self.programs / n] * n
        return [(self.programs - 1) / (n - 1)] * (n - 1) + [1.0]

    def total(self, attr: str) -> float:
        return sum(w * getattr(p, attr) for w, p in zip(self.weights(), self.sampled, strict=True))

    def per_buffer(self, attr: str) -> list[float]:
        """Bytes per argument buffer over the whole grid (weighted sample sums)."""
        totals = [0.0] * len(self.buffer_bytes)
        for w, p in zip(self.weights(), self.sampled, strict=True):
            for buf, nbytes in getattr(p, attr).items():  # attr: load_bytes, store_bytes, unique_load_bytes
                if buf >= 0:
                    totals[buf] += w * nbytes
        return totals

    def max_in_flight(self) -> float:
        return max((p.max_load_bytes for p in self.sampled), default=0.0)

    def max_elems(self) -> float:
        return max((p.max_tensor_elems for p in self.sampled), default=0.0)


class _Recorder:
    def __init__(self) -> None:
        self.launches: list[LaunchCounts] = []
        self.current: LaunchCounts | None = None
        self.program: ProgramCounts | None = None
        self.sample: set[int] = set()
        self.limit: int | None = MAX_SAMPLED_PROGRAMS
        self.index = 0
        self.starts: list[int] = []
        self.ends: list[int] = []


_recorder: _Recorder | None = None
_installed = False


def _current() -> _Recorder | None:
    return _recorder


def sample_indices(programs: int, limit: int | None = MAX_SAMPLED_PROGRAMS) -> set[int]:
    """First, last and evenly spaced programs: boundary programs (partial masks) are always included.
    ``limit`` None interprets every program."""
    if limit is None or programs <= limit:
        return set(range(programs))
    return {int(round(i * (programs - 1) / (limit - 1))) for i in range(limit)}


def replanned(sample: set[int], first: int, programs: int, steps: int, budget: int | None = None) -> set[int]:
    """The sample after its first program (index ``first``) took ``steps``: cut so the launch stays within
    ``budget`` steps, the rest still evenly spaced from the first to the last program (which the weights
    count as itself). Deterministic: the same kernel and grid always sample the same programs."""
    allowed = max(MIN_SAMPLED_PROGRAMS, (budget or STEP_BUDGET) // max(steps, 1))
    if allowed >= len(sample):
        return sample
    rest = programs - 1 - first
    return {first + int(round(i * rest / (allowed - 1))) for i in range(allowed)}


def _buffer_of(addresses: np.ndarray, mask: np.ndarray | None) -> int:
    rec = _recorder
    assert rec is not None
    active = addresses[mask] if mask is not None else addresses.ravel()
    if active.size == 0:
        return -1
    addr = int(active.flat[0])
    i = bisect.bisect_right(rec.starts, addr) - 1
    return i if i >= 0 and addr < rec.ends[i] else -1


def _account(kind: str, ptrs: Any, mask: Any) -> None:
    rec = _recorder
    if rec is None or rec.program is None:
        return
    data = np.asarray(ptrs.data)
    mask_arr = np.asarray(mask.data, dtype=bool) if mask is not None else None
    lanes = int(mask_arr.sum()) if mask_arr is not None else int(data.size)
    itemsize = ptrs.get_element_ty().primitive_bitwidth // 8 if hasattr(ptrs, "get_element_ty") else 4
    nbytes = float(lanes * max(itemsize, 1))
    buf = _buffer_of(data, mask_arr)
    target = rec.program.load_bytes if kind == "load" else rec.program.store_bytes
    target[buf] = target.get(buf, 0.0) + nbytes
    rec.program.max_tensor_elems = max(rec.program.max_tensor_elems, float(lanes))
    if kind == "load":
        active = data[mask_arr] if mask_arr is not None else data.ravel()
        rec.program.lines.setdefault(buf, set()).update(np.unique(active // LINE_BYTES).tolist())
        rec.program.load_ops += 1
        rec.program.max_load_bytes = max(rec.program.max_load_bytes, nbytes)
    rec.program.steps += 1


def install() -> None:
    """Patch the interpreter once per process; the patches are inert unless a ``counting()`` is active."""
    global _installed
    if _installed:
        return
    import triton.runtime.interpreter as interp

    builder = interp.InterpreterBuilder

    def wrap_memory(name: str, kind: str, mask_pos: int | None) -> None:
        original = getattr(builder, name)

        def method(self: Any, ptrs: Any, *args: Any, **kwargs: Any) -> Any:
            mask = args[mask_pos] if mask_pos is not None and len(args) > mask_pos else None
            _account(kind, ptrs, mask)
            return original(self, ptrs, *args, **kwargs)

        setattr(builder, name, method)

    # the unmasked create_load/create_store delegate to these two with an all-true mask
    wrap_memory("create_masked_load", "load", 0)
    wrap_memory("create_masked_store", "store", 1)

    original_dot = builder.create_dot

    def create_dot(self: Any, a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        rec = _recorder
        if rec is not None and rec.program is not None:
            m, k = np.shape(a.data)[-2:]
            n = np.shape(b.data)[-1]
            batch = int(np.prod(np.shape(a.data)[:-2])) if np.ndim(a.data) > 2 else 1
            rec.program.dot_flops += 2.0 * m * n * k * batch
            rec.program.steps += 1
            rec.program.max_tensor_elems = max(rec.program.max_tensor_elems, float(m * n + m * k + k * n))
            precision = str(args[1] if len(args) > 1 else kwargs.get("input_precision", "")).lower()
            bits = a.dtype.primitive_bitwidth if hasattr(a.dtype, "primitive_bitwidth") else 32
            rec.program.dot_dtype = {16: "bf16" if "bf" in str(a.dtype) else "fp16", 8: "fp8"}.get(
                bits, "fp32" if "ieee" in precision else "tf32")
        return original_dot(self, a, b, *args, **kwargs)

    builder.create_dot = create_dot

    for name in _INT_OPS:
        if not hasattr(builder, name):
            continue
        original = getattr(builder, name)

        def int_op(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            out = _original(self, *args, **kwargs)
            rec = _recorder
            if rec is not None and rec.program is not None:
                size = float(np.size(getattr(out, "data", 0)))
                rec.program.int_ops += size
                rec.program.steps += 1
                rec.program.max_tensor_elems = max(rec.program.max_tensor_elems, size)
            return out

        setattr(builder, name, int_op)

    for name, weight in _FLOAT_OPS.items():
        if not hasattr(builder, name):
            continue
        original = getattr(builder, name)

        def alu(self: Any, *args: Any, _original: Any = original, _weight: int = weight, **kwargs: Any) -> Any:
            out = _original(self, *args, **kwargs)
            rec = _recorder
            if rec is not None and rec.program is not None:
                size = float(np.size(getattr(out, "data", 0)))
                rec.program.alu_flops += _weight * size
                rec.program.steps += 1
                rec.program.max_tensor_elems = max(rec.program.max_tensor_elems, size)
            return out

        setattr(builder, name, alu)

    current_recorder, new_program, replan = _current, ProgramCounts, replanned
    original_init = interp.GridExecutor.__init__

    def init(self: Any, fn: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, fn, *args, **kwargs)
        inner = self.fn

        def sampled(**kw: Any) -> Any:
            rec = current_recorder()
            if rec is None or rec.current is None:
                return inner(**kw)
            index, rec.index = rec.index, rec.index + 1
            if index not in rec.sample:
                return None
            rec.program = new_program()
            try:
                return inner(**kw)
            finally:
                rec.current.sampled.append(rec.program)
                if len(rec.current.sampled) == 1 and rec.limit is not None:
                    rec.sample = replan(rec.sample, index, rec.current.programs, rec.program.steps)
                rec.program = None

        # GridExecutor reads the kernel's arguments and looks up ``triton.language`` in its globals: the
        # wrapper gets the kernel's signature and globals, and reaches everything else through its closure.
        wrapper = types.FunctionType(sampled.__code__, getattr(inner, "__globals__", {}), inner.__name__,
                                     None, sampled.__closure__)
        wrapper.__signature__ = inspect.signature(inner)
        self.fn = wrapper

    interp.GridExecutor.__init__ = init

    original_call = interp.GridExecutor.__call__

    def call(self: Any, *args_dev: Any, **kwargs: Any) -> Any:
        rec = _recorder
        if rec is None:
            return original_call(self, *args_dev, **kwargs)
        grid = self.grid
        tensors = [a for a in list(args_dev) + list(kwargs.values()) if hasattr(a, "data_ptr") and hasattr(a, "numel")]
        spans = sorted((t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in tensors)
        rec.starts, rec.ends = [s for s, _ in spans], [e for _, e in spans]
        resolved = grid(dict(zip(self.arg_names, args_dev, strict=False)) | kwargs) if callable(grid) else grid
        dims = tuple(resolved) + (1,) * (3 - len(tuple(resolved)))
        programs = int(dims[0]) * int(dims[1]) * int(dims[2])
        knobs = {k: v for k, v in kwargs.items() if k not in self.arg_names}
        rec.current = LaunchCounts(
            kernel=getattr(getattr(self, "fn", None), "__name__", "kernel"), programs=programs,
            num_warps=int(kwargs.get("num_warps", 4) or 4), num_stages=int(kwargs.get("num_stages", 2) or 2),
            knobs=knobs, buffer_bytes=[float(e - s) for s, e in spans],
        )
        rec.sample, rec.index = sample_indices(programs, rec.limit), 0
        try:
            return original_call(self, *args_dev, **kwargs)
        finally:
            rec.launches.append(rec.current)
            rec.current = None

    interp.GridExecutor.__call__ = call
    _installed = True


class counting:  # noqa: N801 - used as a context manager: ``with counting() as launches``
    """Collect ``LaunchCounts`` for every Triton launch made inside the block."""

    def __init__(self, limit: int | None = MAX_SAMPLED_PROGRAMS) -> None:
        self.limit = limit

    def __enter__(self) -> list[LaunchCounts]:
        global _recorder
        install()
        _recorder = _Recorder()
        _recorder.limit = self.limit
        return _recorder.launches

    def __exit__(self, *exc: object) -> None:
        global _recorder
        _recorder = None
