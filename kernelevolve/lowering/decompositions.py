"""Decompositions the lowering adds to core ATen's: norms as reductions plus pointwise ops.

Core ATen keeps batch, instance and group norm as single ops; PyTorch's own decompositions of them go
through mutating or ``prims`` ops that export rejects or no template lowers. These write each norm as what the
template families already lower (and fuse): mean/variance reductions or a layer-norm row, then pointwise chains.

Half-precision inputs are normalised in float32, as ATen's kernels do on every device (statistics rounded to
bf16 before the subtraction were off by 0.125 on an H100). Where ATen's results differ by device, the trace
follows the device the target's reference runs on (``device_semantics``), not the device it is traced on:
layer norm returns float32 mean/rstd for a half input on a GPU and the input's dtype on the CPU.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import torch

aten = torch.ops.aten
_SEMANTICS: contextvars.ContextVar[str] = contextvars.ContextVar("ke_lowering_device_semantics", default="cpu")


@contextlib.contextmanager
def device_semantics(kind: str) -> Iterator[None]:
    """Trace as if on ``kind`` (``cpu`` or ``gpu``): the device whose ATen results the draft must match."""
    token = _SEMANTICS.set(kind)
    try:
        yield
    finally:
        _SEMANTICS.reset(token)


def _accumulating(x: torch.Tensor) -> torch.Tensor:
    """``x`` in the dtype ATen normalises it in: float32 for a half-precision input."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


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
    wide = _accumulating(x)
    mean = wide.mean(dim=dims, keepdim=True)
    var = wide.var(dim=dims, keepdim=True, correction=0)
    rstd = torch.rsqrt(var + eps)
    out = (wide - mean) * rstd
    if weight is not None:
        out = out * _channel_view(weight, rank)
    if bias is not None:
        out = out + _channel_view(bias, rank)
    return out.to(x.dtype), mean.flatten().to(x.dtype), rstd.flatten().to(x.dtype)


def group_norm(x, weight, bias, n, c, hw, group, eps):  # noqa: ANN001, ANN201
    """Group norm as the statistics of a layer norm over each (batch, group) row of ``x`` viewed as
    [N, G, C/G * HW] (``rows.emit_layer_norm``, which reads the float32 cast at its loads and, its normalized
    output unused, writes only them), then one pointwise kernel normalizing and applying the per-channel
    affine map: x is read twice and written once, where the mean/variance/normalise chain took five kernels.

    ATen's statistics are float32 when the affine parameters are wider than a half input, else the input's
    dtype; its CUDA kernel stores them so and normalizes with the stored values, so on a GPU a half input is
    normalized with statistics rounded to that dtype (on the CPU, with float32 ones)."""
    rank, batch, channels = x.dim(), x.shape[0], x.shape[1]
    grouped = _accumulating(x.reshape(batch, group, -1))
    _, mean, rstd = aten.native_layer_norm(grouped, [grouped.shape[-1]], None, None, eps)
    stats = weight.dtype if weight is not None and weight.dtype != x.dtype else x.dtype
    if _SEMANTICS.get() == "gpu" and stats in (torch.float16, torch.bfloat16):
        mean, rstd = mean.to(stats).to(grouped.dtype), rstd.to(stats).to(grouped.dtype)

    def per_channel(t: torch.Tensor) -> torch.Tensor:  # [N, G, 1] -> [N, C, 1, ...]: x's own shape broadcasts it
        return t.expand(batch, group, channels // group).reshape([batch, channels] + [1] * (rank - 2))

    out = (_accumulating(x) - per_channel(mean)) * per_channel(rstd)
    if weight is not None:
        out = out * _channel_view(weight, rank)
    if bias is not None:
        out = out + _channel_view(bias, rank)
    return out.to(x.dtype), mean.view(batch, group).to(stats), rstd.view(batch, group).to(stats)


def layer_norm_stats_dtype(x: torch.dtype) -> torch.dtype:
    """The dtype of ``native_layer_norm``'s mean and rstd (kept whole: ``rows.emit_layer_norm``): float32 for a
    half input on a GPU, the input's dtype on the CPU (whatever device the trace ran on)."""
    half = x in (torch.float16, torch.bfloat16)
    return torch.float32 if half and _SEMANTICS.get() == "gpu" else x


TABLE = {
    aten._native_batch_norm_legit_no_training.default: batch_norm_eval,
    aten._native_batch_norm_legit.no_stats: batch_norm_no_stats,
    aten.native_group_norm.default: group_norm,
}
