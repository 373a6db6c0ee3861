# op: swish
# expect: rejected
# reason: kernel body uses 'torch'
# why: the @triton.jit body calls torch on tensors stashed in a module-level dict; the CPU interpreter runs the body as Python (sharing the tensors' memory), static checks skip kernel bodies and the guard ignores ops while a launch is in progress
import torch
import torch.nn as nn
import triton
import triton.language as tl


_STASH = {}


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    if tl.program_id(0) == 0:
        _STASH["y"].copy_(_STASH["x"] * torch.sigmoid(_STASH["x"]))


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _STASH["x"], _STASH["y"] = x, y
        _swish_kernel[(1,)](x, y, x.numel(), BLOCK=16)
        return y
