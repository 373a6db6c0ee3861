# op: swish
# expect: incorrect
# reason: NaN where the reference has none
# why: allocates the output and launches a kernel that stores nothing
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return y
