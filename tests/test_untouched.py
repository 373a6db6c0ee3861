"""Simulation at published sizes leaves big float tensors as untouched pages (evaluators/untouched.py): a
KernelBench case's random fill and its model's weight init cost seconds and gigabytes of host memory that
a sampled interpretation never reads."""

from __future__ import annotations

import torch

from evaluators.untouched import LARGE_BYTES, untouched_large


def _resident_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096


def test_big_floats_stay_unwritten_and_everything_else_is_built() -> None:
    big = 4 * LARGE_BYTES // 4  # elements of a float32 tensor of 4x the threshold
    before = _resident_bytes()
    with untouched_large():
        x = torch.rand(big)
        layer = torch.nn.Linear(1 << 12, 1 << 14)  # a 256 MiB weight, kaiming-initialised through nn.init
        like = torch.randn_like(x)
        x.copy_(like)
        small = torch.rand(1000)
        index = torch.randint(0, 7, (big // 8,))
        half = torch.rand(1000, 1000, dtype=torch.float16)
    grown = _resident_bytes() - before
    assert x.shape == (big,) and like.dtype == torch.float32 and layer.weight.requires_grad
    assert grown < index.numel() * 8 + 3 * LARGE_BYTES // 4, grown  # the int tensor, not the floats' 1.5 GiB
    assert int(index.max()) == 6 and float(small.std()) > 0.2 and float(half.float().std()) > 0.2
    assert float(x[:: 1 << 16].abs().sum()) == 0.0 and float(layer.weight.detach()[::512, ::512].abs().sum()) == 0.0
    after = torch.rand(big // 16)  # outside the block, nothing changes
    assert float(after.std()) > 0.2


GRANT_PROBE = '''
import resource, torch
from evaluators.untouched import untouched_large
base = 3 << 30
resource.setrlimit(resource.RLIMIT_AS, (base, resource.RLIM_INFINITY))
try:
    torch.empty(4 << 30, dtype=torch.uint8)
    print("unlimited")
except RuntimeError:
    print("refused")
with untouched_large():
    x = torch.rand(1 << 30)  # 4 GiB of float32, over the limit on its own
    y = x.new_empty((1 << 30,))  # and a second one, as a candidate's output would be
print(x.numel() + y.numel(), resource.getrlimit(resource.RLIMIT_AS)[0] - base)
'''


def test_untouched_tensors_get_address_space_beyond_the_candidate_limit() -> None:
    """A candidate process runs under a soft RLIMIT_AS: a published-size input larger than it (a 17 GiB
    pooling input) could not be allocated for simulation until each untouched tensor was granted its bytes."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", GRANT_PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.split("\n")[:2]
    assert first == "refused"  # the limit holds outside the block
    assert second == f"{2 << 30} {8 << 30}"
