# op: softmax
# expect: ok
# why: column-split softmax: programs combine block maxima with tl.atomic_max into a torch.full(-inf) buffer and sums with tl.atomic_add into a torch.zeros buffer, then normalise (torch.full is allowed by the static rules)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _block_max(x_ptr, max_ptr, n_cols, sx, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    tl.atomic_max(max_ptr + row, tl.max(x, axis=0))


@triton.jit
def _block_sum(x_ptr, max_ptr, sum_ptr, n_cols, sx, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    tl.atomic_add(sum_ptr + row, tl.sum(tl.exp(x - tl.load(max_ptr + row)), axis=0))


@triton.jit
def _normalise(x_ptr, max_ptr, sum_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.exp(x - tl.load(max_ptr + row)) / tl.load(sum_ptr + row)
    tl.store(y_ptr + row * sy + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        block = 1024
        grid = (n_rows, triton.cdiv(n_cols, block))
        row_max = torch.full((n_rows,), float("-inf"), device=x.device, dtype=torch.float32)
        row_sum = torch.zeros((n_rows,), device=x.device, dtype=torch.float32)
        _block_max[grid](x, row_max, n_cols, x.stride(0), BLOCK=block)
        _block_sum[grid](x, row_max, row_sum, n_cols, x.stride(0), BLOCK=block)
        y = torch.empty_like(x)
        _normalise[grid](x, row_max, row_sum, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
        return y
