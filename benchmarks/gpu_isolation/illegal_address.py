"""Writes far outside its output: an illegal memory access that corrupts this process's CUDA context."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _wild_store(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs + (1 << 40), tl.zeros([BLOCK], tl.float32), mask=offs < n)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _wild_store[(triton.cdiv(x.numel(), 1024),)](y, x.numel(), BLOCK=1024)
        return y
