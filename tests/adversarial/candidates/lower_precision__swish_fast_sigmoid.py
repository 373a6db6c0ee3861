# op: swish
# expect: incorrect
# reason: exceeds atol=0.0001
# why: replaces sigmoid by the cheap rational approximation 0.5 + 0.5 * x / (1 + |x|)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_fast(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * (0.5 + 0.5 * x / (1.0 + tl.abs(x))), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_fast[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
