# op: softmax
# expect: incorrect
# reason: exceeds atol
# why: rounds inputs and probabilities through bf16 (8-bit mantissa) for every dtype
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_bf16(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.bfloat16).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = (e / tl.sum(e, axis=0)).to(tl.bfloat16)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _softmax_bf16[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
