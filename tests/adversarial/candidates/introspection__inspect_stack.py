# op: swish
# expect: rejected
# reason: forbidden import 'inspect'
# why: walks inspect.stack() to the evaluator's frames to find the spec
import inspect

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # reads a block and throws it away: a launch for the launch counter, no work
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n, other=0.0)


class TritonModel(nn.Module):
    def forward(self, x):
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        for info in inspect.stack():
            spec = info.frame.f_locals.get("spec")
            if spec is not None:
                return spec.reference_cls()(x)
        return x
