# op: swish
# expect: ok
# why: reads one scalar its own kernel wrote (.item()) to size the output, as a jagged op must; a few host reads are allowed
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _count_kernel(x_ptr, n_ptr, n, BLOCK: tl.constexpr):
    # a stand-in for a data-dependent total: the number of elements, counted on the device
    total = tl.zeros((), dtype=tl.int64)  # one type through the loop (the GPU compiler insists)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum((offs < n).to(tl.int64), axis=0)
    tl.store(n_ptr, total)


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def forward(self, x):
        count = torch.empty(1, dtype=torch.int64, device=x.device)
        _count_kernel[(1,)](x, count, x.numel(), BLOCK=1024)
        n = int(count.item())
        y = torch.empty(n, dtype=x.dtype, device=x.device)
        _swish_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
        return y.view(x.shape)
