"""Copies above rank 6: a rank-7 input permuted whole, and a four-operand einsum over seven indices, whose
broadcast intermediates reach rank 7 (the strided-copy kernel takes six dims; the rest is folded or sliced)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, q, k, w, v):
        y = torch.einsum("abcde,abfde,adcf,abfdg->abcdg", q, k, w, v)
        return x.permute(6, 2, 4, 0, 5, 1, 3).contiguous() * 2.0, y.flip(1)


def get_inputs():
    return [torch.randn(2, 3, 1, 2, 3, 2, 3), torch.randn(2, 2, 3, 2, 4), torch.randn(2, 2, 3, 2, 4),
            torch.randn(2, 2, 3, 3), torch.randn(2, 2, 3, 2, 5)]


def get_init_inputs():
    return []
