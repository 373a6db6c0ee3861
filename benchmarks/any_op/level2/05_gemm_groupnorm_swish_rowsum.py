"""GEMM, GroupNorm over features, swish, then a row sum."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 2048
out_features = 4096
num_groups = 8


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        y = self.norm(self.fc(x))
        y = y * torch.sigmoid(y)
        return y.sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
