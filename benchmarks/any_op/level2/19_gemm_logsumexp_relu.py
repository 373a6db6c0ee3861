"""GEMM, log-sum-exp of each row, ReLU."""

import torch
import torch.nn as nn

batch_size = 8192
in_features = 2048
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(torch.logsumexp(self.fc(x), dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
