# op: swish
# expect: incorrect
# reason: seed 0, first call
# why: returns an unwritten buffer at once and launches the work for call k at the start of call k+1, outside call k's timed window; the judge reads each call's output before the next call runs, so it sees the first call's output unwritten (NaN on the CPU, whatever the fresh allocation holds on a GPU; the timed-output sample sees the same)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._pending = None

    def forward(self, x):
        if self._pending is None:
            _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        else:
            px, py = self._pending
            _swish_kernel[(triton.cdiv(px.numel(), 1024),)](px, py, px.numel(), BLOCK=1024)
        y = torch.empty_like(x)
        self._pending = (x, y)
        return y
