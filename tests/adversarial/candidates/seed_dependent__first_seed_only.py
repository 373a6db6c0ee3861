# op: swish
# expect: incorrect
# reason: seed 1
# why: correct for the first nine calls (seed 0: three cases, three calls each), garbage afterwards: only a second seed exposes it
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


@triton.jit
def _half_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 0.5 * tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


_CALLS = [0]


class TritonModel(nn.Module):
    def forward(self, x):
        _CALLS[0] += 1
        y = torch.empty_like(x)
        grid = (triton.cdiv(x.numel(), 1024),)
        if _CALLS[0] <= 9:
            _swish_kernel[grid](x, y, x.numel(), BLOCK=1024)
        else:
            _half_kernel[grid](x, y, x.numel(), BLOCK=1024)
        return y
