"""logsumexp kept whole as one row kernel: over the last dim of rows holding -inf only or one +inf (ATen's
shift rule), over two outer dims with keepdim, and over a pointwise chain read on the way in."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        rows = torch.arange(x.shape[0], device=x.device)[:, None]
        cols = torch.arange(x.shape[1], device=x.device)[None, :]
        special = torch.where(rows % 3 == 0, float("-inf"), x)
        special = torch.where((rows % 3 == 1) & (cols == 2), float("inf"), special)
        return (torch.logsumexp(special, dim=1), torch.logsumexp(y, dim=(0, 2), keepdim=True),
                torch.logsumexp(y * 3.0 + 1.0, dim=-1))


def get_inputs():
    return [torch.randn(12, 40), torch.randn(5, 7, 33)]


def get_init_inputs():
    return []
