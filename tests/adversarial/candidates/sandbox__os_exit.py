# op: swish
# expect: crash
# reason: exited with code 0 without a result
# why: os._exit(0) in forward: importing os for a process exit is allowed statically (a crash, not a cheat); the forked child dies, the worker survives
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        os._exit(0)
