# op: swish
# expect: incorrect
# reason: NaN where the reference has none
# why: the second kernel reads its scratch buffer's left neighbour, unmasked, weighted by zero: the first element reads one before the buffer, which only a poisoned guard band in front of every allocation shows
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_into(x_ptr, t_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(t_ptr + offs, x * tl.sigmoid(x), mask=mask)


@triton.jit
def _copy_peek_left(t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    left = tl.load(t_ptr + offs - 1, mask=mask)  # one before the start for the first element
    tl.store(y_ptr + offs, t + 0.0 * left, mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        n = x.numel()
        scratch, y = torch.empty_like(x), torch.empty_like(x)
        _swish_into[(triton.cdiv(n, 256),)](x, scratch, n, BLOCK=256)
        _copy_peek_left[(triton.cdiv(n, 256),)](scratch, y, n, BLOCK=256)
        return y
