# op: swish
# expect: rejected
# reason: forward ran torch compute ops outside Triton kernels: mul, sigmoid
# why: a module-level assignment `_gate = torch.sigmoid` hides the call from the static import-alias resolution; the ATen recorder still sees it
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


_gate = torch.sigmoid


class TritonModel(nn.Module):
    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return x * _gate(x)
