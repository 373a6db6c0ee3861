"""Multi-head self-attention written out: fused QKV projection, scaled dot-product, output projection."""

import torch
import torch.nn as nn

batch_size = 16
seq_len = 1024
embed_dim = 1024
num_heads = 8


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        b, t, e = x.shape
        q, k, v = self.qkv(x).split(e, dim=-1)
        q, k, v = (z.view(b, t, self.num_heads, e // self.num_heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (e // self.num_heads) ** 0.5
        out = torch.softmax(scores, dim=-1) @ v
        return self.out(out.transpose(1, 2).reshape(b, t, e))


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]
