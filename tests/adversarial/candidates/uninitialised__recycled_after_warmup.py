# op: swish
# expect: ok
# gpu-expect: incorrect
# gpu-reason: stale or remembered result
# why: computes honestly for the first three calls of a shape (all the correctness protocol makes, where fresh allocations are NaN-poisoned), then returns torch.empty_like(x) after a launch that writes nothing: in a timing loop the caching allocator hands back the block the previous call's output just freed, which held eager's result for the same inputs when inputs were reused; with the inputs rewritten between calls it is stale and a sampled timed output check fails it. Accepted on the cpu target, where nothing is timed
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
def _touch_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._calls = {}

    def forward(self, x):
        key = tuple(x.shape)
        self._calls[key] = self._calls.get(key, 0) + 1
        y = torch.empty_like(x)
        if self._calls[key] > 3:
            _touch_kernel[(1,)](x, 16, BLOCK=16)
            return y
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
