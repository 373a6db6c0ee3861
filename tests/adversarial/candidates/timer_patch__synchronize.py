# op: swish
# expect: rejected
# reason: assignment to module attribute 'torch.cuda.synchronize'
# why: replaces torch.cuda.synchronize with a no-op so the timer's end event is read before the kernel finished
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


def _no_sync(device=None):
    return None


torch.cuda.synchronize = _no_sync


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
