"""Layer normalisation over the last three dims of a 4-D tensor."""

import torch
import torch.nn as nn

batch_size = 16
features = 64
dim1 = 128
dim2 = 128


class Model(nn.Module):
    def __init__(self, features, dim1, dim2):
        super().__init__()
        self.norm = nn.LayerNorm((features, dim1, dim2))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features, dim1, dim2]
