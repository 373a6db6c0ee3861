"""Triplet margin loss (margin 1, L2 distance) over anchor, positive and negative embeddings."""

import torch
import torch.nn as nn

batch_size = 8192
embed_dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=1.0)

    def forward(self, anchor, positive, negative):
        return self.loss(anchor, positive, negative)


def get_inputs():
    return [torch.randn(batch_size, embed_dim), torch.randn(batch_size, embed_dim), torch.randn(batch_size, embed_dim)]


def get_init_inputs():
    return []
