"""Swish scaled by 1e-6: every output (|y| < 1e-5) is far below the fp32 atol of 1e-4, so zeros or any small
constant pass the elementwise check; only the precision floor (relative error) can fail them."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) * 1e-6


def get_init_inputs() -> list:
    return []


def get_inputs(device="cpu") -> dict[str, tuple]:
    return {
        "4096x4096": (torch.randn(4096, 4096, device=device),),
        "odd_2049x1000": (torch.randn(2049, 1000, device=device),),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    return {
        "1000": (torch.randn(1000, device=device),),
        "33x65": (torch.randn(33, 65, device=device),),
    }


TOLERANCES = {torch.float32: (1e-4, 1e-4)}


def FLOPS(case) -> int:
    return 4 * case[0].numel()


def BYTES(case) -> int:
    return 2 * case[0].numel() * case[0].element_size()
