# op: swish
# expect: incorrect
# reason: NaN where the reference has none
# gpu-expect: incorrect
# gpu-reason: NaN where the reference has none
# why: specialised to the first production case (4096x4096): one program per 4096-element row, grid = numel // 4096 and the mask hard-coded to 4096*4096 elements; inputs whose size is not a multiple of 4096 (every small test case but one, and 2049x1000 on a GPU) keep unwritten elements
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROW = 4096
TOTAL = 4096 * 4096


@triton.jit
def _swish_rows(x_ptr, y_ptr, ROW: tl.constexpr, TOTAL: tl.constexpr):
    offs = tl.program_id(0) * ROW + tl.arange(0, ROW)
    mask = offs < TOTAL
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_rows[(x.numel() // ROW,)](x, y, ROW=ROW, TOTAL=TOTAL)
        return y
