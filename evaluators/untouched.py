"""Large host tensors that a simulation never reads for their values, left as untouched (zero) pages.

Why: a simulation interprets a sample of each launch's programs at the published sizes. It needs every
tensor's shape, strides and addresses, and the values only of what steers the work (integer indices, small
tensors). Filling a KernelBench case's 6-9 GB of random floats, and its reference's and candidate's weights,
took seconds of the simulation, and the resident memory of two evaluations at once could exceed a 24 GiB
host. Inside :func:`untouched_large`, a large floating-point tensor that would be filled at random (or
copied, or set to a constant) is allocated and left alone: fresh anonymous pages read as zero and cost no
memory until written. Integers, booleans and small tensors are built as before.

A candidate process on the CPU runs under an address-space limit (``RLIMIT_AS``, 16 GiB by default) that
catches a runaway kernel before the host's OOM killer does. Untouched pages still take address space, so a
17 GiB published-size input could not even be allocated: each large tensor made here (an ``empty`` included,
such as a candidate's output) first raises the soft limit by its own bytes, up to the hard limit.
"""

from __future__ import annotations

import math
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

# Above glibc's largest dynamic mmap threshold (32 MiB): such blocks are always fresh, zeroed mappings.
LARGE_BYTES = 64 << 20

_FACTORIES = {torch.rand, torch.randn, torch.zeros, torch.ones, torch.full, torch.empty}
_LIKE = {torch.rand_like, torch.randn_like, torch.zeros_like, torch.ones_like, torch.full_like, torch.empty_like}
_FILLS = {"uniform_", "normal_", "fill_", "zero_", "copy_", "random_", "bernoulli_", "exponential_",
          "cauchy_", "log_normal_", "geometric_", "trunc_normal_", "kaiming_uniform_"}


def _large(dtype: torch.dtype | None, numel: int) -> bool:
    dtype = dtype or torch.get_default_dtype()
    return (dtype.is_floating_point or dtype.is_complex) and numel * dtype.itemsize >= LARGE_BYTES


def _shape(args: tuple, kwargs: dict) -> tuple[int, ...] | None:
    size = kwargs.get("size", args[0] if args else None)
    if isinstance(size, (list, tuple, torch.Size)) and all(isinstance(s, int) for s in size):
        return tuple(size)
    if args and all(isinstance(a, int) for a in args):
        return tuple(args)
    return None


def _grant(nbytes: int) -> None:
    """Raise this process's soft address-space limit by ``nbytes`` (a no-op where there is none)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        raised = soft + nbytes if hard == resource.RLIM_INFINITY else min(soft + nbytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (raised, hard))


def _unwritten(shape: tuple[int, ...], dtype: torch.dtype | None, requires_grad: bool = False) -> torch.Tensor:
    dtype = dtype or torch.get_default_dtype()
    _grant(math.prod(shape) * dtype.itemsize)
    return torch.empty(shape, dtype=dtype, requires_grad=requires_grad)


class _Untouched(TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in _FACTORIES:
            shape = _shape(args if func is not torch.full else args[:1], kwargs)
            dtype = kwargs.get("dtype")
            device = torch.device(kwargs.get("device") or "cpu")
            if shape is not None and device.type == "cpu" and _large(dtype, math.prod(shape)):
                return _unwritten(shape, dtype, bool(kwargs.get("requires_grad", False)))
        if func in _LIKE and args and isinstance(args[0], torch.Tensor):
            like = args[0]
            dtype = kwargs.get("dtype") or like.dtype
            if like.device.type == "cpu" and _large(dtype, like.numel()):
                return _unwritten(tuple(like.shape), dtype)
        if func is torch.empty_strided and len(args) >= 2:
            shape, dtype = tuple(args[0]), kwargs.get("dtype")
            if torch.device(kwargs.get("device") or "cpu").type == "cpu" and _large(dtype, math.prod(shape)):
                _grant(math.prod(shape) * (dtype or torch.get_default_dtype()).itemsize)
        if getattr(func, "__name__", "") in ("new_empty", "new_zeros") and len(args) >= 2:
            base = args[0]
            shape = _shape(args[1:], kwargs)
            dtype = kwargs.get("dtype") or getattr(base, "dtype", None)
            if isinstance(base, torch.Tensor) and shape is not None and base.device.type == "cpu" \
                    and _large(dtype, math.prod(shape)):
                return _unwritten(shape, dtype)
        name = getattr(func, "__name__", "")
        if name in _FILLS:
            target = args[0] if args else kwargs.get("tensor", kwargs.get("self"))  # nn.init passes ``tensor=``
            if isinstance(target, torch.Tensor) and target.device.type == "cpu" and _large(target.dtype,
                                                                                          target.numel()):
                return target
        return func(*args, **kwargs)


@contextmanager
def untouched_large() -> Iterator[None]:
    """Large float tensors made or filled inside are allocated but never written (see the module's doc)."""
    with _Untouched():
        yield
