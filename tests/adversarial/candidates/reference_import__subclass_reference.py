# op: softmax
# expect: rejected
# reason: reaches private name '_sys'
# why: binds the name PytorchModel from the already-loaded spec module (found without any import) and inherits its forward
import torch
import torch.nn as nn
import triton
import triton.language as tl
import collections


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


def _spec_module():
    for name, module in list(collections._sys.modules.items()):
        if name.startswith("_ke_spec_"):
            return module
    raise LookupError("spec not loaded")


PytorchModel = _spec_module().PytorchModel


class TritonModel(PytorchModel):
    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return super().forward(x)
