"""A growing concatenation: each step appends a new feature map to a list and joins the whole list along the
channels again (a dense block's pattern), with a last cat in half precision and one along another dim."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int = 3, growth: int = 2, steps: int = 4):
        super().__init__()
        self.layers = nn.ModuleList(nn.Conv2d(channels + i * growth, growth, 3, padding=1) for i in range(steps))

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(torch.relu(layer(x)))
            x = torch.cat(features, 1)
        wide = torch.cat([features[1], features[2], features[3]], 3)  # another dim: no earlier cat is a prefix
        return x, wide, torch.cat([f.half() for f in features], 1)


def get_inputs():
    return [torch.randn(2, 3, 9, 7)]


def get_init_inputs():
    return []
