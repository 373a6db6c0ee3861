"""Own spec: fp16, bf16 and fp32 cases of one softmax/gelu/matmul/sum chain (dtype-generic candidate)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        a = torch.softmax(x, dim=-1) * 2 + y
        return a, a.sum(1), torch.nn.functional.gelu(a) @ y.transpose(0, 1), (x > 0).to(torch.int32).sum(-1)


def get_inputs():
    return [torch.randn(8, 32, dtype=torch.float16), torch.randn(8, 32, dtype=torch.float16)]


def get_test_inputs():
    return [[torch.randn(4, 40, dtype=torch.float16), torch.randn(4, 40, dtype=torch.float16)],
            [torch.randn(5, 16, dtype=torch.bfloat16), torch.randn(5, 16, dtype=torch.bfloat16)],
            [torch.randn(3, 16), torch.randn(3, 16)]]


def get_init_inputs():
    return []
