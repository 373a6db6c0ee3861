# op: swish
# expect: rejected
# reason: try/except in candidate code
# why: launch a kernel that fails to compile, fall back to torch in the except branch: a correct answer from a broken kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _broken_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.no_such_function(tl.load(x_ptr + offs)))


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        try:
            _broken_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        except Exception:
            y = x * torch.sigmoid(x)
        return y
