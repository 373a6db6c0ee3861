# op: swish
# expect: rejected
# reason: result remembered across calls
# why: returns the first call's cached output (keyed by shape) with a dummy launch each call; the fresh-input second call exposes it
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
        self._out = {}

    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        if x.shape not in self._out:
            y = torch.empty_like(x)
            _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
            self._out[x.shape] = y
        return self._out[x.shape]
