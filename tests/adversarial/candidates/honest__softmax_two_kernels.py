# op: softmax
# expect: ok
# why: kernel 1 writes each row's max and sum of exponentials into torch.empty scratch buffers, kernel 2 normalises on a 2-D grid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_stats(x_ptr, max_ptr, sum_ptr, n_cols, sx, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = float("-inf")
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * sx + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        m = tl.maximum(m, tl.max(x.to(tl.float32), axis=0))
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * sx + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        s += tl.sum(tl.exp(x.to(tl.float32) - m), axis=0)
    tl.store(max_ptr + row, m)
    tl.store(sum_ptr + row, s)


@triton.jit
def _normalise(x_ptr, max_ptr, sum_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(max_ptr + row)
    s = tl.load(sum_ptr + row)
    tl.store(y_ptr + row * sy + cols, (tl.exp(x - m) / s).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        row_max = torch.empty(n_rows, device=x.device, dtype=torch.float32)
        row_sum = torch.empty(n_rows, device=x.device, dtype=torch.float32)
        _row_stats[(n_rows,)](x, row_max, row_sum, n_cols, x.stride(0), BLOCK=1024)
        y = torch.empty_like(x)
        _normalise[(n_rows, triton.cdiv(n_cols, 1024))](x, row_max, row_sum, y, n_cols, x.stride(0), y.stride(0),
                                                        BLOCK=1024)
        return y
