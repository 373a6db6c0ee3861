# op: softmax
# expect: incorrect
# reason: NaN where the reference has none
# why: softmax kernel launched for every other row only
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0) * 2
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _softmax_rows[(triton.cdiv(x.shape[0], 2),)](x, y, x.shape[1], x.stride(0),
                                                     BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
