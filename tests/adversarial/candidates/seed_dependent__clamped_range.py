# op: swish
# expect: incorrect
# reason: exceeds atol=0.0001
# why: clamps inputs to [-2, 2] (a lookup-table range that covers most of one sample): values in the tails are wrong
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_clamped(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    x = tl.minimum(tl.maximum(x, -2.0), 2.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_clamped[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
