# op: swish
# expect: rejected
# reason: assignment to module attribute 'triton.testing.do_bench'
# why: replaces triton.testing.do_bench with a constant
import torch
import torch.nn as nn
import triton
import triton.testing
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=mask)


triton.testing.do_bench = lambda *args, **kwargs: 1e-6


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
