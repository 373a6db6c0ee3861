# op: swish
# expect: ok
# why: persistent kernel: a fixed number of programs each walks the blocks in a grid-stride loop
import torch
import torch.nn as nn
import triton
import triton.language as tl


NUM_PROGRAMS = 3


@triton.jit
def _swish_persistent(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    num_blocks = tl.cdiv(n, BLOCK)
    for blk in range(pid, num_blocks, nprog):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_persistent[(NUM_PROGRAMS,)](x, y, x.numel(), BLOCK=256)
        return y
