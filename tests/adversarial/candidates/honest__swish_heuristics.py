# op: swish
# expect: ok
# why: @triton.heuristics picks an EVEN_N flag (unmasked fast path) from the arguments; both paths are exercised by the cases
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN_N": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, x * tl.sigmoid(x))
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
