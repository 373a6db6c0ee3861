# op: swish
# expect: rejected
# reason: dynamic code or I/O builtin 'exec'
# why: hides the torch call in a string run by exec
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
        scope = {"x": x}
        exec("y = x * x.sigmoid()", scope)
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return scope["y"]
