# op: swish
# expect: ok
# why: flattens with reshape(-1), computes on the flat view and returns the output viewed back to the input's shape
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = x / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offs, y, mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        flat = x.reshape(-1)
        out = torch.empty_like(flat)
        _swish_kernel[(triton.cdiv(flat.numel(), 256),)](flat, out, flat.numel(), BLOCK=256)
        return out.view(x.shape)
