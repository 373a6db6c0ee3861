# op: swish
# expect: rejected
# reason: scalars to the host; at most 8
# why: does the op on the host a scalar at a time (.item() reads, Python math, fill_ writes into views) behind a dummy launch; host reads are capped so this must be rejected
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < 1, other=0.0)


class TritonModel(nn.Module):
    def forward(self, x):
        _noop_kernel[(1,)](x, BLOCK=16)
        y = torch.empty_like(x)
        flat_in, flat_out = x.view(-1), y.view(-1)
        for i in range(flat_in.numel()):
            v = flat_in[i].item()
            flat_out[i].fill_(v / (1.0 + math.exp(-v)))
        return y
