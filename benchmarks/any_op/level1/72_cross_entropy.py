"""Cross-entropy of logits against class indices, averaged over the batch."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
num_classes = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, labels):
        return F.cross_entropy(logits, labels)


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
