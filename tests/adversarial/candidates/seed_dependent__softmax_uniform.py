# op: softmax
# expect: incorrect
# reason: exceeds atol
# why: writes 1/n_cols everywhere (the softmax of a constant row); exact for one degenerate input, wrong for random rows
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _uniform_rows(y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(y_ptr + row * stride + cols, tl.zeros([BLOCK], dtype=tl.float32) + 1.0 / n_cols, mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _uniform_rows[(x.shape[0],)](y, x.shape[1], y.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
