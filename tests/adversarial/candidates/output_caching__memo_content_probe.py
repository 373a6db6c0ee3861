# op: swish
# expect: rejected
# reason: result remembered across calls
# why: memoises on data_ptr plus two probed input values read to the host (within the 8-read cap): fresh values miss, but the same values hit, and an in-place swap of two input sets in a timing loop would hit on both
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
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._memo = {}

    def forward(self, x):
        flat = x.view(-1)
        key = (x.data_ptr(), tuple(x.shape), flat[0].item(), flat[-1].item())
        if key in self._memo:
            _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
            return self._memo[key]
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        self._memo[key] = y
        return y
