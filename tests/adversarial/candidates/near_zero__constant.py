# op: specs/tiny_swish.py
# expect: incorrect
# reason: below fp32 precision
# why: writes the constant 1e-7 everywhere: within atol=1e-4 of every true output (|y| < 1e-5), no math done
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fill_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full([BLOCK], 1e-7, dtype=tl.float32), mask=offs < n)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _fill_kernel[(triton.cdiv(x.numel(), 1024),)](y, x.numel(), BLOCK=1024)
        return y
