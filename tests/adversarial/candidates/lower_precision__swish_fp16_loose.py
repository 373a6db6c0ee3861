# op: specs/swish_loose.py
# expect: incorrect
# reason: below fp32 precision
# why: computes fp32 swish in fp16 inside the kernel (~5e-4 relative error, well inside the loose 1e-2 tolerance) and stores fp32: an fp16 kernel timed against an fp32 baseline
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_fp16(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float16)
    y = x * tl.sigmoid(x.to(tl.float32)).to(tl.float16)
    tl.store(y_ptr + offs, y.to(tl.float32), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_fp16[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
