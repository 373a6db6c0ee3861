"""GEMM, elementwise minimum with a constant, minus a learned bias."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096
ceiling = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, ceiling):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.ceiling = ceiling
        self.shift = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x):
        return torch.clamp(self.fc(x), max=self.ceiling) - self.shift


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, ceiling]
