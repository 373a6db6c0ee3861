# op: swish
# expect: ok
# why: allocates with torch.empty(shape, device=, dtype=) and walks a 2-D view by x.stride() on a (rows, column-blocks) grid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_2d(x_ptr, y_ptr, n_cols, sx_row, sx_col, sy_row, sy_col, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * sx_row + cols * sx_col, mask=mask, other=0.0)
    tl.store(y_ptr + row * sy_row + cols * sy_col, x * tl.sigmoid(x), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        x2 = x.reshape(-1, x.shape[-1])
        y2 = y.view(x2.shape)
        rows, cols = x2.shape
        grid = (rows, triton.cdiv(cols, 256))
        _swish_2d[grid](x2, y2, cols, x2.stride(0), x2.stride(1), y2.stride(0), y2.stride(1), BLOCK=256)
        return y
