# op: swish
# expect: ok
# why: @triton.autotune over three configs; under the interpreter the worker rotates configs per call, so every config is checked
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=2),
        triton.Config({"BLOCK": 512}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        _swish_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
