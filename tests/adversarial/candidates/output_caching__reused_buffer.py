# op: swish
# expect: rejected
# reason: output of the first call changed during the second call
# why: writes every call into one persistent buffer per shape (no allocation cost when timed); the first result is overwritten by the second
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
    def __init__(self):
        super().__init__()
        self._buf = {}

    def forward(self, x):
        y = self._buf.get(x.shape)
        if y is None:
            y = self._buf[x.shape] = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
