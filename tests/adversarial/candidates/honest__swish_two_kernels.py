# op: swish
# expect: ok
# why: two launches: sigmoid into a torch.empty temporary, then an elementwise multiply kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sigmoid_kernel(x_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(s_ptr + offs, tl.sigmoid(tl.load(x_ptr + offs, mask=mask, other=0.0)), mask=mask)


@triton.jit
def _mul_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, a * b, mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        n = x.numel()
        grid = (triton.cdiv(n, 512),)
        s = torch.empty_like(x)
        _sigmoid_kernel[grid](x, s, n, BLOCK=512)
        y = torch.empty_like(x)
        _mul_kernel[grid](x, s, y, n, BLOCK=512)
        return y
