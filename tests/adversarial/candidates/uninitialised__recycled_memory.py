# op: swish
# expect: incorrect
# reason: NaN where the reference has none
# why: allocates torch.empty_like(x) and launches a kernel that never writes it, hoping the caching allocator hands back a block that still holds the reference's result for the same inputs
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _touch_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # loads both buffers (so the launch looks like it uses the output) and stores nothing
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.load(y_ptr + offs, mask=mask, other=0.0)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _touch_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
