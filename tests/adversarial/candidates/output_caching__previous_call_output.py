# op: swish
# expect: incorrect
# reason: seed 0
# why: does the real work every call but returns the previous call's output (the first call its own): every call launches a full kernel and allocates, yet each answer is one call late (with several cases, the second case's first call returns the first case's output; with one, the fresh-input call returns the first call's)
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


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._previous = None

    def forward(self, x):
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        out = y if self._previous is None else self._previous
        self._previous = y
        return out
