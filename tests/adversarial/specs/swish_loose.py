"""Swish under KernelBench's loose tolerance (1e-2): the elementwise check alone admits a kernel that computes
an fp32 op in fp16, so only the precision floor (evaluators/precision.py) can fail it."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_init_inputs() -> list:
    return []


def get_inputs(device="cpu") -> dict[str, tuple]:
    return {
        "4096x4096": (torch.randn(4096, 4096, device=device),),
        "1M": (torch.randn(1 << 20, device=device),),
        "odd_2049x1000": (torch.randn(2049, 1000, device=device),),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    return {
        "1000": (torch.randn(1000, device=device),),
        "33x65": (torch.randn(33, 65, device=device),),
        "4096": (torch.randn(4096, device=device),),
    }


TOLERANCES = {torch.float32: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    return 4 * case[0].numel()


def BYTES(case) -> int:
    return 2 * case[0].numel() * case[0].element_size()
