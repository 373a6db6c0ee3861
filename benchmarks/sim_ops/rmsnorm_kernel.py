import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024  # column chunk: 16..8192 (loops when smaller than the row)
NUM_WARPS = 4


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row * n_cols + cols, x * inv * w, mask=mask)


class TritonModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(4096))

    def forward(self, x):
        out = torch.empty_like(x)
        rows, cols = x.shape
        rmsnorm_kernel[(rows,)](x, self.weight, out, cols, 1e-6, BLOCK=BLOCK_SIZE, num_warps=NUM_WARPS)
        return out
