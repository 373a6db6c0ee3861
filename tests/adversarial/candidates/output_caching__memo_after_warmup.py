# op: swish
# expect: ok
# gpu-expect: incorrect
# gpu-reason: stale or remembered result
# why: computes honestly for the first three calls with an input address (all the correctness protocol makes), then copies its stored output into a fresh buffer with a Triton kernel: no storage is shared, so only the timed calls see it; with the timed inputs rewritten between calls the copy is stale and a sampled timed output check fails it. On the cpu target nothing is timed, so it is harmless there and accepted
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._seen = {}
        self._stored = {}

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        self._seen[key] = self._seen.get(key, 0) + 1
        y = torch.empty_like(x)
        grid = (triton.cdiv(x.numel(), 1024),)
        if self._seen[key] > 3 and key in self._stored:
            _copy_kernel[grid](self._stored[key], y, x.numel(), BLOCK=1024)
            return y
        _swish_kernel[grid](x, y, x.numel(), BLOCK=1024)
        kept = torch.empty_like(x)
        _copy_kernel[grid](y, kept, x.numel(), BLOCK=1024)
        self._stored[key] = kept
        return y
