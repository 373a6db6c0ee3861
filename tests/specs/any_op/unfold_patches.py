"""Tensor.unfold as a view: a ViT patch embedding (two non-overlapping unfolds, reshape, linear), overlapping
sliding windows (step < size, negative dim) read by a pointwise op, and an unfold of an input returned as
is (the output must be a copy, not an alias of the input)."""

import torch
import torch.nn as nn

patch = 4
channels = 3
dim = 16


class Model(nn.Module):
    def __init__(self, patch, channels, dim):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(channels * patch * patch, dim)

    def forward(self, img, seq):
        p = self.patch
        x = img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, p * p * img.shape[1])
        windows = seq.unfold(-1, 3, 2)
        return self.proj(x), torch.tanh(windows) * 2.0, seq.unfold(1, 2, 1)


def get_inputs():
    return [torch.rand(2, channels, 8, 12), torch.randn(2, 5, 11)]


def get_init_inputs():
    return [patch, channels, dim]
