# op: swish
# expect: rejected
# reason: reaches module 'dataclasses.builtins'
# gpu-expect: compile_error
# gpu-reason: failed to import
# why: runs exec through dataclasses.builtins (an allowed import re-exports builtins) to import os and read the environment: the static 'no exec / no os' rules are bypassed
import torch
import torch.nn as nn
import triton
import triton.language as tl
import dataclasses


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * tl.sigmoid(x)).to(y_ptr.dtype.element_ty), mask=mask)


_scope = {}
dataclasses.builtins.exec("import os\nenv_keys = sorted(os.environ)", _scope)


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
