"""Own spec: whole-tensor and per-dim reductions (max/min with indices, prod, std, norm, var_mean, sort and
top-k values), and pointwise ops with scalar operands (where, clamp by tensor, fmod, remainder, pow, atan2)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        mx, ix = x.min(dim=1)
        return (x.max(), mx, ix, x.mean(), x.prod(dim=-1), x.std(dim=0), torch.where(x > y, x, 0.3),
                torch.clamp(x, min=y), x.abs().argmin(dim=0), (x > 0).all(dim=1), x.norm(p=2, dim=1),
                x.amax(dim=(0, 1)), torch.cumprod(x, dim=0), torch.var_mean(x, dim=1)[1], x.log_softmax(0),
                x.to(torch.int32) // 2,
                x.sort(dim=1)[0], x.topk(3, dim=0, largest=False)[0], torch.remainder(x, 0.7), torch.fmod(x, 0.7),
                x.round(), x.sign(),
                torch.atan2(x, y), x.pow(3), x.pow(y.abs()), torch.erf(x), x.sigmoid().logit())


def get_inputs():
    return [torch.randn(6, 40), torch.randn(6, 40)]


def get_test_inputs():
    return [[torch.randn(6, 40), torch.randn(6, 40)], [torch.randn(3, 150), torch.randn(3, 150)]]


def get_init_inputs():
    return []
