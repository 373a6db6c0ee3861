"""A kernel that never ends: only killing the process frees the GPU."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _spin(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    i = 0
    while tl.sum(acc) >= 0:  # always true
        acc += 1.0
        i += 1
    tl.store(y_ptr + offs, acc, mask=offs < n)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _spin[(triton.cdiv(x.numel(), 1024),)](y, x.numel(), BLOCK=1024)
        return y
