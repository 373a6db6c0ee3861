"""Scans beyond cumsum/cumprod (cummax and cummin with their indices, logcumsumexp) and lgamma.

Small integers give cummax/cummin many ties, where torch's index rule (the later element wins) matters;
rows of 300 are longer than one BLOCK_R step, so the carry between steps is exercised too.
"""

import torch
import torch.nn as nn

rows = 6
length = 300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        values, indices = torch.cummax(x, dim=1)
        low, at = torch.cummin(y, dim=0)
        lse = torch.logcumsumexp(x * 0.5, dim=1)
        return values + indices.float() * 0.001 + lse, low * at.float(), torch.lgamma(x * 0.7 + 0.2)


def get_inputs():
    return [torch.randint(-3, 4, (rows, length)).float(), torch.randint(-2, 3, (length, 2, rows)).float()]


def get_init_inputs():
    return []
