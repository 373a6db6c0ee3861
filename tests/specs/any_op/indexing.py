"""Own spec: embedding lookup, advanced indexing, index_select, constant pad, repeat, stack and roll."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)

    def forward(self, tokens: torch.Tensor, x: torch.Tensor, idx: torch.Tensor):
        return (self.emb(tokens), x[idx], x[:, idx], torch.index_select(x, 1, idx), F.pad(x, (1, 2), value=0.5),
                x.repeat(2, 1), torch.stack([x, x * 2]), x.roll(1, 0), torch.triu(x))


def get_inputs():
    return [torch.randint(0, 10, (3, 5)), torch.randn(6, 7), torch.tensor([0, 2, 1, 3])]


def get_test_inputs():
    return [[torch.randint(0, 10, (3, 5)), torch.randn(6, 7), torch.tensor([0, 2, 1, 3])],
            [torch.randint(0, 10, (2, 9)), torch.randn(5, 4), torch.tensor([3, 0])]]


def get_init_inputs():
    return [10, 4]
