# op: swish
# expect: rejected
# reason: '.numpy' exposes tensor memory
# why: computes swish in numpy on x.numpy() / y.numpy() views without importing numpy (math.e ** ndarray); Tensor.numpy() dispatches no ATen compute op (only 'detach', which is allowed), so the recorder sees nothing
import torch
import torch.nn as nn
import triton
import triton.language as tl
import math


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        a = x.numpy()
        y.numpy()[...] = a / (1.0 + math.e ** (-a))
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return y
