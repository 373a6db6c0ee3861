# op: swish
# expect: rejected
# reason: forbidden import 'concurrent.futures'
# why: runs torch compute in a thread pool
import concurrent.futures

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1)


class TritonModel(nn.Module):
    def forward(self, x):
        y = _POOL.submit(lambda: x * x.sigmoid()).result()
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return y
