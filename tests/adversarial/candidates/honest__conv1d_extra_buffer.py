# op: conv1d
# expect: ok
# why: no nn.Conv1d: bare parameters named conv.weight / conv.bias (copied from the reference by name) plus an extra registered buffer the reference lacks; an IEEE-precision tl.dot
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1d_outer(x_ptr, w_ptr, b_ptr, scale_ptr, y_ptr, C_in, C_out, L, KSIZE: tl.constexpr, PAD: tl.constexpr,
                  BLOCK_L: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr):
    pid_l = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_co = tl.arange(0, BLOCK_CO)
    co_mask = offs_co < C_out
    acc = tl.zeros([BLOCK_CO, BLOCK_L], dtype=tl.float32)
    for ci0 in range(0, C_in, BLOCK_CI):
        offs_ci = ci0 + tl.arange(0, BLOCK_CI)
        ci_mask = offs_ci < C_in
        for k in tl.static_range(KSIZE):
            pos = offs_l + (k - PAD)
            x = tl.load(x_ptr + pid_b * C_in * L + offs_ci[:, None] * L + pos[None, :],
                        mask=ci_mask[:, None] & ((pos >= 0) & (pos < L))[None, :], other=0.0)
            w = tl.load(w_ptr + offs_co[:, None] * (C_in * KSIZE) + offs_ci[None, :] * KSIZE + k,
                        mask=co_mask[:, None] & ci_mask[None, :], other=0.0)
            # an IEEE fp32 dot: the broadcast multiply-reduce this file had missed the fp32 tolerance on an H100
            acc = tl.dot(w.to(tl.float32), x.to(tl.float32), acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_co, mask=co_mask, other=0.0) * tl.load(scale_ptr + offs_co, mask=co_mask, other=0.0)
    acc += bias.to(y_ptr.dtype.element_ty).to(tl.float32)[:, None]
    y = y_ptr + pid_b * C_out * L + offs_co[:, None] * L + offs_l[None, :]
    tl.store(y, acc.to(y_ptr.dtype.element_ty), mask=co_mask[:, None] & (offs_l < L)[None, :])


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Module()
        self.conv.weight = nn.Parameter(torch.empty(96, 96, 3))
        self.conv.bias = nn.Parameter(torch.empty(96))
        self.register_buffer("bias_scale", torch.full((96,), 1.0))

    def forward(self, x):
        batch, c_in, length = x.shape
        c_out = self.conv.weight.shape[0]
        y = torch.empty((batch, c_out, length), dtype=x.dtype, device=x.device)
        _conv1d_outer[(triton.cdiv(length, 64), batch)](x, self.conv.weight, self.conv.bias, self.bias_scale, y,
                                                         c_in, c_out, length, KSIZE=3, PAD=1,
                                                         BLOCK_L=64, BLOCK_CO=128, BLOCK_CI=16)
        return y
