# op: softmax
# expect: incorrect
# reason: has shape (33, 64), expected (64, 33)
# gpu-expect: incorrect
# gpu-reason: exceeds atol
# why: normalises columns into a transposed output
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_t(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + cols * n_rows + row, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
        _softmax_t[(n_rows,)](x, y, n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols))
        return y
