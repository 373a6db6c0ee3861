# op: swish
# expect: rejected
# reason: reaches private name '_sys'
# why: finds the already-loaded spec module through collections._sys.modules (no import, no forbidden name) and runs its reference; the static checker misses it, the ATen recorder catches the reference's compute
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


def _reference():
    for name, module in list(collections._sys.modules.items()):
        if name.startswith("_ke_spec_"):
            return getattr(module, "Pytorch" + "Model")()
    raise LookupError("spec not loaded")


class TritonModel(nn.Module):
    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return _reference()(x)
