# op: swish
# expect: rejected
# reason: forward ran torch compute ops outside Triton kernels
# why: operator.methodcaller('sigmoid') / operator.mul: the operator module is an allowed import; the recorder catches the ops
import torch
import torch.nn as nn
import triton
import triton.language as tl
import operator


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return operator.mul(x, operator.methodcaller("sig" + "moid")(x))
