# op: swish
# expect: incorrect
# reason: NaN where the reference has none
# why: grid = n // BLOCK with no masking: the ragged tail (1000 % 128, 33*65 % 128) is never written
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_nomask(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x * tl.sigmoid(x))


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_nomask[(x.numel() // 128,)](x, y, BLOCK=128)
        return y
