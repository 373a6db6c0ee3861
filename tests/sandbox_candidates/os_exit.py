import os

import torch
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class TritonModel(torch.nn.Module):
    def forward(self, x):
        os._exit(0)  # kills the evaluating process: must be a crash, not a hang
