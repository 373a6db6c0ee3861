# op: swish
# expect: rejected
# reason: forward mutated input #0
# why: writes a correct output but uses the input as scratch space (zeroes it afterwards)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_scratch_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)
    tl.store(x_ptr + offs, tl.zeros_like(x), mask=mask)  # scribble on the input


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_scratch_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
