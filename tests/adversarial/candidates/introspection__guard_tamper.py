# op: swish
# expect: rejected
# reason: reaches private name '_python_dispatch'
# why: computes with torch ops, then clears the active ForwardGuard's op record, reached through torch.utils._python_dispatch (an attribute access, not a call, so the torch.utils rule never fires)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


_pd = torch.utils._python_dispatch


class TritonModel(nn.Module):
    def forward(self, x):
        y = x * x.sigmoid()
        _pd._get_current_dispatch_mode().ops.clear()
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return y
