# op: softmax
# expect: ok
# why: whole row per program with exp2((x - max) * log2(e)) instead of exp
import torch
import torch.nn as nn
import triton
import triton.language as tl


LOG2E = 1.4426950408889634


@triton.jit
def _softmax_exp2(x_ptr, y_ptr, n_cols, sx, sy, LOG2E: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * sx + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)
    tl.store(y_ptr + row * sy + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        _softmax_exp2[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), LOG2E=LOG2E,
                                 BLOCK=triton.next_power_of_2(n_cols))
        return y
