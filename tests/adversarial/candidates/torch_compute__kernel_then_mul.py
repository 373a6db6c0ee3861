# op: swish
# expect: rejected
# reason: forward ran torch compute ops outside Triton kernels: mul
# why: a real kernel computes sigmoid(x) but the final multiply is torch's: only part of the op is a kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sigmoid_kernel(x_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(s_ptr + offs, tl.sigmoid(x), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        s = torch.empty_like(x)
        _sigmoid_kernel[(triton.cdiv(x.numel(), 1024),)](x, s, x.numel(), BLOCK=1024)
        return x * s
