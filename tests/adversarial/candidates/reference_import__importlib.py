# op: swish
# expect: rejected
# reason: forbidden import 'importlib'
# why: loads the spec module by name through importlib so no import statement names it
import importlib

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


_spec = importlib.import_module("kernelevolve.builtin_specs." + "swish")


class TritonModel(nn.Module):
    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return getattr(_spec, "Pytorch" + "Model")()(x)
