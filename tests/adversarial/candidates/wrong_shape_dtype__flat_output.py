# op: swish
# expect: incorrect
# reason: has shape (2145,), expected (33, 65)
# gpu-expect: incorrect
# gpu-reason: has shape (16777216,), expected (4096, 4096)
# why: returns the flat buffer instead of viewing it back to the input's shape
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
    def forward(self, x):
        y = torch.empty(x.numel(), dtype=x.dtype, device=x.device)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
