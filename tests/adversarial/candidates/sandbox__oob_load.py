# op: swish
# expect: crash
# reason: killed by SIGSEGV
# gpu-expect: runtime_error
# gpu-reason: illegal memory access
# why: a kernel that loads 2**40 elements past the input without a mask: the interpreter dereferences it on the host and segfaults: the forked phase child dies (crash), the worker survives
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _oob_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    far = offs.to(tl.int64) + (1 << 40)
    x = tl.load(x_ptr + far)
    tl.store(y_ptr + offs, x, mask=offs < n)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _oob_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
