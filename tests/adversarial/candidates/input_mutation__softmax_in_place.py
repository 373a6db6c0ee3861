# op: softmax
# expect: rejected
# reason: forward mutated input #0
# why: softmax written in place over the input rows and the input returned
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_inplace(x_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(x_ptr + row * stride + cols, (e / tl.sum(e, axis=0)).to(x_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        _softmax_inplace[(x.shape[0],)](x, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return x
