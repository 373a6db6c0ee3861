# op: swish
# expect: rejected
# reason: reaches module 'triton.runtime'
# why: reaches the threading module as triton.runtime.jit.threading (allowed root, no import) and computes on that thread, where the thread-local ForwardGuard dispatch mode records nothing
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
        y = torch.empty_like(x)
        worker = triton.runtime.jit.threading.Thread(target=lambda: y.copy_(x * x.sigmoid()))
        worker.start()
        worker.join()
        _noop_kernel[(1,)](x, x.numel(), BLOCK=16)
        return y
