"""Joins the cat lowering must get right: a stack along the last dim (slices one element thin), a cat along
the first dim, one of a transposed view (read through its strides), one of permuted 3-d views (no
[outer, size, inner] view of them exists, so each is copied into its slice), a mixed-dtype cat (ATen
promotes), and one of ten sources (past what one kernel reads)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y, z, n, w):
        stacked = torch.stack([x, y], dim=-1) * 2.0
        rows = torch.cat([x, y, x], dim=0)
        permuted = torch.cat([x.t(), z], dim=1) + 1.0
        mixed = torch.cat([n, x], dim=1)
        folded = torch.cat([w.transpose(1, 2), w.transpose(1, 2) * 3.0], dim=0)
        many = torch.cat([x * k for k in range(10)], dim=1)
        return stacked, rows, permuted, mixed, folded, many


def get_inputs():
    return [torch.randn(33, 17), torch.randn(33, 17), torch.randn(17, 5), torch.randint(-9, 9, (33, 3)),
            torch.randn(4, 5, 6)]


def get_init_inputs():
    return []
