# op: swish
# expect: incorrect
# reason: NaN where the reference has none
# why: each lane also reads its right neighbour, unmasked, and weights it by zero: the last element reads one past the input, which is right only while the allocator happens to leave finite bytes there; the input's poisoned guard band makes that read visible
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_peek(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    right = tl.load(x_ptr + offs + 1, mask=mask)  # one past the end for the last element
    tl.store(y_ptr + offs, x * tl.sigmoid(x) + 0.0 * right, mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_peek[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        return y
