# op: swish
# expect: rejected
# reason: result remembered across calls
# why: memoises on the input's data_ptr/shape: a timing loop that hands the same unwritten input again gets the stored output; the unwritten third call of the protocol returns it too, in the earlier output's storage
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


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._memo = {}

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()), x.dtype)
        if key in self._memo:
            _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
            return self._memo[key]
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        self._memo[key] = y
        return y
