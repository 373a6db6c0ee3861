# op: swish
# expect: timeout
# reason: candidate phase exceeded the 20 s timeout
# gpu-expect: timeout
# gpu-reason: phase exceeded the
# why: while True: pass in forward; the phase deadline kills the child (the one timeout file: it costs the full 20 s)
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
        while True:
            pass
