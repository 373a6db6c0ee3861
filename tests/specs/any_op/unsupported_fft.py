"""Own spec: an op the lowering has no template for (an FFT), for the one-line reason test."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.rfft(x).abs()


def get_inputs():
    return [torch.randn(4, 64)]


def get_init_inputs():
    return []
