"""Watching a candidate's forward: poison fresh allocations, record ATen ops, count Triton launches.

Poisoning ``torch.empty*`` results with NaN (or a sentinel for integers) makes a kernel that leaves
elements unwritten fail correctness instead of passing on recycled memory; each one also gets poisoned
guard bands on both sides (guard_band.py), so a kernel reading past an intermediate's ends fails too.
Recording the ATen ops a forward dispatches (outside Triton launches, whose interpreter copies are the
harness's own) lets the evaluator allow only allocation and views, so torch compute hidden in forward is
rejected.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from collections import Counter
from types import FrameType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from evaluators import compile_release
from evaluators.guard_band import bandable, banded_like, poison

_aten = torch.ops.aten
_EMPTY = {
    _aten.empty.memory_format,
    _aten.empty_like.default,
    _aten.empty_strided.default,
    _aten.new_empty.default,
    _aten.new_empty_strided.default,
}
# Allocation, zero-initialisation (accumulators for atomics) and pure views/metadata.
ALLOWED_OPS = frozenset(
    {
        "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
        "zeros", "zeros_like", "new_zeros", "zero_",
        "view", "_unsafe_view", "reshape", "as_strided", "expand", "permute", "transpose", "t",
        "squeeze", "unsqueeze", "select", "slice", "split", "split_with_sizes", "chunk", "unbind",
        "alias", "detach", "flatten", "unflatten", "view_as", "expand_as", "narrow", "movedim",
        "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "size", "stride", "dim",
        "is_contiguous", "lift_fresh", "_to_copy_noop",
    }
)
# What Triton's CPU interpreter itself dispatches while marshalling a launch's arguments.
INTERPRETER_OPS = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "set_",
                             "copy_", "alias", "view", "as_strided", "detach", "_to_copy", "lift_fresh"})
ALLOWED_OPS = ALLOWED_OPS | {"full", "full_like", "new_full", "fill_"}
# Drawing random numbers is not computing the op: a reference that draws in forward (a random initial state)
# needs the same draws, which only the same generator state gives, so they cannot stand in for a result.
RANDOM_OPS = frozenset({"randn", "rand", "randn_like", "rand_like", "normal_", "uniform_"})
ALLOWED_OPS = ALLOWED_OPS | RANDOM_OPS
# A forward may read a few scalars back to the host (``.item()``): an output whose size depends on the data
# (a jagged op's total length, computed by the candidate's own kernel) must be sized before it is allocated.
# The cap keeps the host from doing the op's work a scalar at a time.
HOST_READ = "_local_scalar_dense"
MAX_HOST_READS = 8


class HostReadLimit(Exception):
    """Raised at the read past the cap, so a forward that computes a scalar at a time stops at once instead
    of running (16M reads: minutes) until its phase times out."""


class _LaunchState(threading.local):
    depth = 0
    launches = 0


_state = _LaunchState()
_hooked = False


_threads_started = [0]  # process-wide: threads started by candidate code, wherever it runs
_candidate_files: set[str] = set()  # source files of candidates loaded in this process


def register_candidate_file(path: str | os.PathLike[str]) -> None:
    """Mark a file's code as the candidate's, for attributing thread starts (:func:`started_by_candidate`)."""
    _candidate_files.update({str(path), os.path.realpath(path)})


def _stdlib_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if paths.get(k)})


_STDLIB = _stdlib_roots()


def _is_stdlib(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return True
    real = os.path.realpath(filename) if not filename.startswith("<") else filename
    return real.startswith(_STDLIB) and "site-packages" not in real and "dist-packages" not in real


def started_by_candidate(frame: FrameType | None) -> bool:
    """Whether the thread start called from ``frame`` is the candidate's: walking out through the standard
    library (``threading``, ``concurrent.futures``), the first other frame decides. A thread that torch,
    Triton or the evaluator starts for itself (a compile pool, an allocator or profiler thread) is theirs,
    even when a candidate's forward was what called into them; one that candidate code starts, directly or
    through a standard-library helper, counts."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name != __file__ and not _is_stdlib(name):
            return name in _candidate_files or os.path.realpath(name) in _candidate_files
        frame = frame.f_back
    return False


def _install_thread_hooks() -> None:
    """Count thread starts by candidate code: a dispatch mode is thread-local, so work on another thread
    would be unseen."""
    import _thread
    import threading

    original_start, original_new = threading.Thread.start, _thread.start_new_thread

    def start(self: Any, *args: Any, **kwargs: Any) -> Any:
        if started_by_candidate(sys._getframe(1)):
            _threads_started[0] += 1
        return original_start(self, *args, **kwargs)

    def start_new_thread(*args: Any, **kwargs: Any) -> Any:
        if started_by_candidate(sys._getframe(1)):
            _threads_started[0] += 1
        return original_new(*args, **kwargs)

    threading.Thread.start = start
    _thread.start_new_thread = start_new_thread
    threading._start_new_thread = start_new_thread  # what Thread.start calls on CPython 3.11-3.12


def threads_started() -> int:
    return _threads_started[0]


def install_launch_hooks() -> None:
    """Wrap Triton's launch entry points once per process to count launches and mark their extent,
    and count thread starts; a compile lets go of the shared device lock (:mod:`evaluators.compile_release`)."""
    global _hooked
    if _hooked:
        return
    _install_thread_hooks()
    import triton.runtime.jit as jit

    targets = [jit.JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        targets.append(InterpretedFunction)
    except ImportError:  # pragma: no cover - older Triton
        pass
    for cls in targets:
        original = cls.run

        def run(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            if not kwargs.get("warmup", False):
                _state.launches += 1
            _state.depth += 1
            try:
                return _original(self, *args, **kwargs)
            finally:
                _state.depth -= 1

        cls.run = run
    compile_release.install()
    _hooked = True


def install_interpreter_autotune() -> None:
    """Make ``@triton.autotune`` usable under the CPU interpreter, where there is no device to time on.

    Instead of benchmarking, each call uses the next config in turn, so over the evaluation's many calls
    (seeds x cases x 2) every config's output is checked: on a GPU the autotuner may pick any of them.
    """
    from triton.runtime.autotuner import Autotuner

    if getattr(Autotuner, "_ke_rotating", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.nargs = dict(zip(self.arg_names, args, strict=False))
        configs = self.prune_configs(kwargs) if len(self.configs) > 1 else self.configs
        turn = getattr(self, "_ke_turn", 0)
        self._ke_turn = turn + 1
        config = configs[turn % len(configs)]
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
        try:
            return self.fn.run(*args, **kwargs, **config.all_kwargs())
        finally:
            self.nargs = None

    Autotuner.run = run
    Autotuner._ke_rotating = True


def launch_count() -> int:
    return _state.launches


def op_name(func: Any) -> str:
    return str(func.overloadpacket.__name__) if hasattr(func, "overloadpacket") else str(func)


class ForwardGuard(TorchDispatchMode):
    """Context manager around one forward call of an untrusted candidate."""

    def __init__(self, poison: bool = True) -> None:
        super().__init__()
        self.poison = poison
        self.ops: Counter[str] = Counter()
        self.launch_ops: Counter[str] = Counter()
        self.launches = 0
        self._start = 0

    def __enter__(self) -> ForwardGuard:
        install_launch_hooks()
        self._start = _state.launches
        return super().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.launches = _state.launches - self._start
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if _state.depth:  # inside a launch: only the interpreter's own marshalling may dispatch ATen ops
            name = op_name(func)
            if name not in INTERPRETER_OPS:
                self.launch_ops[name] += 1
            return out
        self.ops[op_name(func)] += 1
        if self.ops[HOST_READ] > MAX_HOST_READS:
            raise HostReadLimit(f"read more than {MAX_HOST_READS} scalars to the host; at most {MAX_HOST_READS}")
        if self.poison and func in _EMPTY and isinstance(out, torch.Tensor) and out.numel():
            if not bandable(out):
                poison(out)
                return out
            banded = banded_like(out)  # poisoned, with poisoned neighbours: a read past either end shows
            del out
            return banded
        return out

    def disallowed_ops(self) -> list[str]:
        outside = {name for name in self.ops if name not in ALLOWED_OPS and name != HOST_READ}
        if self.ops[HOST_READ] > MAX_HOST_READS:
            outside.add(f"{HOST_READ} (read {self.ops[HOST_READ]} scalars to the host; at most {MAX_HOST_READS})")
        return sorted(outside | set(self.launch_ops))


def integrity_fingerprint() -> tuple:
    """Identities of the checking machinery, taken before untrusted code loads and compared after it ran:
    a candidate that patches the guard from inside its own process is caught by the change."""
    import threading

    import triton.runtime.jit as jit

    parts = [threading.Thread.start, ForwardGuard.__torch_dispatch__, ForwardGuard.disallowed_ops,
             ForwardGuard.__enter__, ForwardGuard.__exit__, jit.JITFunction.run, torch.Tensor.__torch_dispatch__,
             torch.equal, torch.Tensor.clone, TorchDispatchMode.__enter__]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        parts.append(InterpretedFunction.run)
    except ImportError:  # pragma: no cover
        pass
    return tuple(id(p) for p in parts) + (frozenset(ALLOWED_OPS), frozenset(INTERPRETER_OPS))
