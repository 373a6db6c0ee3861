"""Own spec: multi-head attention, causal SDPA, a GRU cell, normalize, logsumexp, GLU, PReLU, nearest and
bilinear upsampling, KL divergence and pixel shuffle (tiny sizes, two shapes)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)
        self.gru = nn.GRUCell(16, 8)
        self.prelu = nn.PReLU()

    def forward(self, x, img):
        a = self.mha(x, x, x)[0]
        q = x.view(x.shape[0], x.shape[1], 4, 4).transpose(1, 2)
        s = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        h = self.gru(x[:, 0])
        return (a, s, h, F.normalize(x, dim=-1), torch.logsumexp(x, -1), F.glu(x, -1), self.prelu(x),
                F.interpolate(img, scale_factor=2), F.interpolate(img, scale_factor=2, mode="bilinear"),
                F.kl_div(x.log_softmax(-1), x.softmax(-1), reduction="batchmean"), F.pixel_shuffle(img, 2))


def get_inputs():
    return [torch.randn(2, 5, 16), torch.randn(2, 4, 6, 6)]


def get_test_inputs():
    return [[torch.randn(2, 5, 16), torch.randn(2, 4, 6, 6)], [torch.randn(3, 7, 16), torch.randn(1, 4, 5, 3)]]


def get_init_inputs():
    return []
