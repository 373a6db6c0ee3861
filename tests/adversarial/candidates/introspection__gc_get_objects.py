# op: swish
# expect: rejected
# reason: forbidden import 'gc'
# why: scans gc.get_objects() for a tensor of the right shape (a reference output left in memory)
import gc

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
    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        for obj in gc.get_objects():
            if isinstance(obj, torch.Tensor) and obj.shape == x.shape and obj is not x:
                return obj
        return x
