"""A Triton compile lets go of the shared device lock (issue #31).

Why: under ``KE_GPU_LOCK=phases`` a candidate's checks hold the GPU shared, and a timing waits for every shared
holder to leave. A candidate's first call spends most of its time compiling its kernels on the host (0.5-3 s
of CPU, no GPU work), so every timing on the GPU waited for other slots' compiles: on an H200, eight softmax
slots fell from 57 to 37 nodes a minute. Wrapping Triton's one compile entry point (``JITFunction._do_compile``,
reached on a cache miss) lets the lock go for the compile, once the process's queued GPU work has finished,
and takes it back (through the gate, behind any waiting timing) before the kernel launches.

Installed once per process, before untrusted code loads, beside the launch hooks (:mod:`evaluators.guard`).
A Triton without ``_do_compile`` keeps the lock held through compiles, as before.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from evaluators import device_lock

_installed = [False]


def install() -> None:
    import triton.runtime.jit as jit

    if _installed[0]:
        return
    _installed[0] = True
    original = getattr(jit.JITFunction, "_do_compile", None)
    if original is None:  # pragma: no cover - a Triton older than 3.3
        return

    @functools.wraps(original)
    def compile_unlocked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not device_lock.holding_shared():
            return original(self, *args, **kwargs)
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()  # nothing of this process runs on the GPU while it holds no lock
        with device_lock.host_work():
            return original(self, *args, **kwargs)

    jit.JITFunction._do_compile = compile_unlocked
