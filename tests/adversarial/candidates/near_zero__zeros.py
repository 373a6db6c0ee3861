# op: specs/tiny_swish.py
# expect: incorrect
# reason: below fp32 precision
# why: writes zeros with a Triton kernel: every true output (|y| < 1e-5) is inside atol=1e-4, so the elementwise check passes a kernel that does no math (relative error 1)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _zeros_kernel[(triton.cdiv(x.numel(), 1024),)](y, x.numel(), BLOCK=1024)
        return y
