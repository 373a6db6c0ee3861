"""GEMM without bias, an added bias, ReLU, division by a constant."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 2048
divisor = 2.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.randn(out_features))
        self.divisor = divisor

    def forward(self, x):
        return torch.relu(x @ self.weight.t() + self.bias) / self.divisor


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
