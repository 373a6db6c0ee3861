"""MBDT operator spec (paper case study, up to 9.25x over PyTorch): multi-feature bucketization with
per-feature borders.

forward(x, borders, border_offsets): ``x`` is fp32 [B, F]; ``borders`` is a flat fp32 tensor of every feature's
sorted borders concatenated; ``border_offsets`` is int64 [F + 1], and feature f's borders are
``borders[border_offsets[f]:border_offsets[f + 1]]`` (nb_f of them, counts vary per feature, 0 allowed). The
output is int64 [B, F]: ``bin = (number of borders of feature f that are < x[b, f]) + bin_offset[f]`` with
``bin_offset[f] = border_offsets[f] + f`` (feature f has nb_f + 1 bins), so bin ids are unique across features.

Tie semantics: ``torch.bucketize(right=False)`` / ``torch.searchsorted(side="left")``: a value equal to a border
is NOT counted by it, so it falls in the bin below that border (a lower bound). Duplicate borders are allowed.
x is NaN-free (randn-based; no infinities).

Reference: what a PyTorch user writes: pad every feature's borders to [F, MAX_BORDERS] with +inf (one gather),
``torch.searchsorted`` row by row on x transposed to [F, B], transpose back, add the bin offsets. The pad width
is the op's documented limit of MAX_BORDERS borders per feature, not the largest count of the call: a width
read from the data (``.item()``) cannot run on the meta tensors the simulated targets cost the eager
reference with, and the production layouts draw counts up to the limit.

The border layout (counts per feature) of a case is fixed, like a model's bucketization config: it comes from a
per-case generator, so every seed has the same shapes (the evaluator refills inputs in place for its
fresh-input call); border and x values change with the seed. Borders are per-feature scaled and shifted sorted
normals; x uses the same per-feature scale and shift, and a share of x is set exactly equal to one of its
feature's borders so the tie rule matters (all test cases, 10% of production values). One test case quantizes
values to multiples of 0.5: duplicate borders and many ties.

The output is an integer, so it is compared exactly (no tolerance applies).
Memory-bound at the floor (read x, write int64 bins: 12 bytes a value); a binary search costs up to
ceil(log2(MAX_BORDERS + 1)) = 7 dependent gathers per value, from borders that fit in L1 (a feature's at most
256 bytes).
"""

import torch
import torch.nn as nn

MAX_BORDERS = 64  # the op's limit on borders per feature (production layouts draw counts in [8, 64])


class PytorchModel(nn.Module):
    """Reference: +inf-padded borders, row-wise ``torch.searchsorted`` (left), plus the bin offsets."""

    def forward(self, x: torch.Tensor, borders: torch.Tensor, border_offsets: torch.Tensor) -> torch.Tensor:
        n_feat = x.shape[1]
        starts = border_offsets[:-1]
        counts = border_offsets[1:] - starts
        j = torch.arange(MAX_BORDERS, device=x.device)
        padded_src = torch.cat([borders, borders.new_full((1,), float("inf"))])  # the sentinel guards 0 borders
        idx = torch.where(j < counts[:, None], starts[:, None] + j, borders.numel())
        padded = padded_src[idx]  # [F, MAX_BORDERS], each row sorted, +inf past the feature's count
        bins = torch.searchsorted(padded, x.t().contiguous())  # [F, B], side="left": borders < x
        return bins.t() + (starts + torch.arange(n_feat, device=x.device))


def get_init_inputs() -> list:
    return []


def _layout(n_feat: int, low: int, high: int, layout_seed: int) -> torch.Tensor:
    """border_offsets for counts drawn in [low, high] from the case's own generator (seed-independent)."""
    gen = torch.Generator().manual_seed(layout_seed)
    counts = torch.randint(low, high + 1, (n_feat,), generator=gen)
    return torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)])


def _case(b: int, offsets: torch.Tensor, device: str, tie_fraction: float, step: float = 0.0) -> tuple:
    n_feat = offsets.numel() - 1
    n_borders = int(offsets[-1])
    if device == "meta":  # shapes only: the simulated targets cost the eager reference on meta tensors
        return (torch.empty(b, n_feat, device="meta"), torch.empty(n_borders, device="meta"), offsets.to("meta"))
    counts = offsets[1:] - offsets[:-1]
    scale = torch.randn(n_feat).exp()
    shift = 3 * torch.randn(n_feat)
    j = torch.arange(MAX_BORDERS)
    raw = torch.randn(n_feat, MAX_BORDERS) * scale[:, None] + shift[:, None]
    x = torch.randn(b, n_feat) * scale + shift
    if step:  # quantized values: duplicate borders and many ties
        raw, x = (raw / step).round() * step, (x / step).round() * step
    raw = torch.where(j < counts[:, None], raw, float("inf")).sort(dim=1).values
    borders = raw[j < counts[:, None]].contiguous()  # row-major: feature 0's sorted borders, then feature 1's...
    if n_borders:
        pick = offsets[:-1] + (torch.rand(b, n_feat) * counts).long().clamp(max=counts - 1).clamp(min=0)
        tie = (torch.rand(b, n_feat) < tie_fraction) & (counts > 0)
        x = torch.where(tie, borders[pick.clamp(max=n_borders - 1)], x)
    return x.to(device), borders.to(device), offsets.to(device)


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling): 8..64 borders per feature."""
    return {
        "b4096_f64": _case(4096, _layout(64, 8, MAX_BORDERS, 1), device, 0.1),
        "b4096_f512": _case(4096, _layout(512, 8, MAX_BORDERS, 2), device, 0.1),
        "b65536_f64": _case(65536, _layout(64, 8, MAX_BORDERS, 3), device, 0.1),
        "b65536_f512": _case(65536, _layout(512, 8, MAX_BORDERS, 4), device, 0.1),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: ties, features with 0 and 1 borders, duplicate borders, the
    64-border limit, sizes that are multiples of no block."""
    return {
        "b7_f3_ties": _case(7, torch.tensor([0, 1, 1, 6]), device, 0.5),
        "b33_f19_quantized": _case(33, _layout(19, 0, 9, 11), device, 0.3, step=0.5),
        "b50_f70": _case(50, _layout(70, 8, MAX_BORDERS, 12), device, 0.2),
        "b5_f2_full": _case(5, torch.tensor([0, MAX_BORDERS, 2 * MAX_BORDERS]), device, 0.5),
    }


def FLOPS(case) -> int:
    return 0  # compares and gathers only: no floating-point arithmetic


def BYTES(case) -> int:
    x, borders, offsets = case
    out = x.numel() * 8  # int64 bins
    return x.numel() * x.element_size() + out + borders.numel() * borders.element_size() + offsets.numel() * 8
