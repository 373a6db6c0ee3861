"""The run-time half of an export, copied verbatim into what ``ke best`` writes (so it imports only torch and
the standard library): the routing key of a call, loading kernels kept as source text, and running a node's
module with tensors it does not own.

``signature`` is also what ``kernelevolve.export`` keys the routes on at export time, so the key a measured
case was routed under and the key a call is looked up with come from one definition.
"""

from __future__ import annotations

import linecache
import sys
import types
from typing import Any

import torch
from torch.func import functional_call


def signature(args: tuple) -> tuple:
    """The routing key of a call: each tensor's shape and dtype, every other argument's repr."""
    return tuple((tuple(a.shape), str(a.dtype)) if isinstance(a, torch.Tensor) else repr(a) for a in args)


def module_from_source(name: str, source: str) -> types.ModuleType:
    """Import ``source`` as module ``name``. Its text goes into linecache under a pseudo file name, because
    Triton's ``@triton.jit`` reads a kernel's source through ``inspect`` and there is no file to read."""
    filename = f"<ke-export {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - the export's own kernels
    return module


def named_tensors(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Parameters then buffers, by name: what a node's module reads and the owner lends it."""
    tensors = dict(module.named_parameters())
    tensors.update(module.named_buffers())
    return tensors


class NodeModule:
    """One node's module (or the reference), run with its owner's parameters and buffers, as the evaluator
    ran it: shared names get the owner's values, cast to the node's own dtype for that name.

    The module is built on the meta device when every tensor it holds is one the owner lends, so it costs no
    memory and no random numbers; a node holding tensors of its own (a constant table) is built for real and
    follows the inputs' device."""

    def __init__(self, cls: type[torch.nn.Module], args: tuple, kwargs: dict[str, Any], lent: set[str]):
        module = None
        try:
            with torch.device("meta"):
                module = cls(*args, **kwargs)
        except Exception:  # an __init__ that needs real data
            module = None
        if module is None or not set(named_tensors(module)) <= lent:
            module = cls(*args, **kwargs)
        self.module = module.eval()
        self.dtypes = {name: t.dtype for name, t in named_tensors(module).items()}
        self.own = [name for name in self.dtypes if name not in lent]

    def __call__(self, tensors: dict[str, torch.Tensor], args: tuple) -> Any:
        lent = {name: t if t.dtype == self.dtypes[name] else t.to(self.dtypes[name])
                for name, t in tensors.items() if name in self.dtypes}
        if self.own:
            device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
            if device is not None and named_tensors(self.module)[self.own[0]].device != device:
                self.module.to(device)
        return functional_call(self.module, lent, tuple(args))
