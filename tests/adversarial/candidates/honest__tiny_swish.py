# op: specs/tiny_swish.py
# expect: ok
# why: honest fp32 x * sigmoid(x) * 1e-6 (outputs far below atol: the precision floor must not reject a correct kernel)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tiny_swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x) * 1e-6, mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _tiny_swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
