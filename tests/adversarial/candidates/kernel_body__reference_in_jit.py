# op: softmax
# expect: rejected
# reason: reaches private name '_sys'
# why: the kernel body finds the loaded spec in collections._sys.modules and runs the reference during the launch, where the guard records nothing
import torch
import torch.nn as nn
import triton
import triton.language as tl
import collections


_STASH = {}


def _reference():
    for name, module in list(collections._sys.modules.items()):
        if name.startswith("_ke_spec_"):
            return getattr(module, "Pytorch" + "Model")()
    raise LookupError("spec not loaded")


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    if tl.program_id(0) == 0:
        _STASH["y"].copy_(_reference()(_STASH["x"]))


class TritonModel(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _STASH["x"], _STASH["y"] = x, y
        _softmax_kernel[(1,)](x, y, x.numel(), BLOCK=16)
        return y
