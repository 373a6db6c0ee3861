# op: swish
# expect: incorrect
# reason: exceeds atol
# why: zero-filled output with only the first half written: zeros are not NaN, but swish(x) is far from 0 for most x
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.zeros_like(x)
        n = x.numel() // 2
        _swish_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
        return y
