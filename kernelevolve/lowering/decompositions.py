"""Decompositions the lowering adds to core ATen's: norms as reductions plus pointwise ops.

Core ATen keeps batch, instance and group norm as single ops; PyTorch's own decompositions of them go
through mutating or ``prims`` ops that export rejects or no template lowers. These write each norm as the
mean/variance reductions and one pointwise chain the template families already lower (and fuse).
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def _channel_view(t: torch.Tensor, rank: int) -> torch.Tensor:
    return t.view([1, -1] + [1] * (rank - 2))


def batch_norm_eval(x, weight, bias, running_mean, running_var, momentum, eps):  # noqa: ANN001, ANN201
    """Eval-mode batch norm: per-channel affine map from the running statistics."""
    rank = x.dim()
    out = (x - _channel_view(running_mean, rank)) * _channel_view(torch.rsqrt(running_var + eps), rank)
    if weight is not None:
        out = out * _channel_view(weight, rank)
    if bias is not None:
        out = out + _channel_view(bias, rank)
    empty = x.new_zeros((0,))
    return out, empty, empty


def batch_norm_no_stats(x, weight, bias, training, momentum, eps):  # noqa: ANN001, ANN201
    """Batch statistics without running ones (instance norm reshapes to this): biased variance."""
    rank = x.dim()
    dims = [0] + list(range(2, rank))
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, correction=0)
    rstd = torch.rsqrt(var + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * _channel_view(weight, rank)
    if bias is not None:
        out = out + _channel_view(bias, rank)
    return out, mean.flatten(), rstd.flatten()


def group_norm(x, weight, bias, n, c, hw, group, eps):  # noqa: ANN001, ANN201
    """Group norm: statistics over (channels of the group x spatial), then a per-channel affine map."""
    rank = x.dim()
    grouped = x.reshape(x.shape[0], group, -1)
    mean = grouped.mean(dim=2, keepdim=True)
    var = grouped.var(dim=2, keepdim=True, correction=0)
    rstd = torch.rsqrt(var + eps)
    out = ((grouped - mean) * rstd).view(x.shape)
    if weight is not None:
        out = out * _channel_view(weight, rank)
    if bias is not None:
        out = out + _channel_view(bias, rank)
    return out, mean.view(x.shape[0], group), rstd.view(x.shape[0], group)


TABLE = {
    aten._native_batch_norm_legit_no_training.default: batch_norm_eval,
    aten._native_batch_norm_legit.no_stats: batch_norm_no_stats,
    aten.native_group_norm.default: group_norm,
}
