# op: swish
# expect: rejected
# reason: forbidden import 'kernelevolve.builtin_specs.swish'
# why: imports the spec's reference and calls it
import torch
import torch.nn as nn
import triton
import triton.language as tl
from kernelevolve.builtin_specs.swish import PytorchModel


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.ref = PytorchModel()

    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return self.ref(x)
