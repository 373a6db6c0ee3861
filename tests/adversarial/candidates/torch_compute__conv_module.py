# op: conv1d
# expect: rejected
# reason: forward ran torch compute ops outside Triton kernels
# why: keeps the reference's nn.Conv1d (so parameters copy by name) and just calls it after a dummy launch
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(96, 96, 3, padding=1)

    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return self.conv(x.float()).to(x.dtype)
