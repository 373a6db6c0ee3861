"""fp32 matmul under KernelBench's loose tolerance (1e-2): fp16 (or TF32) operands with fp32 accumulation
pass it elementwise, so only the precision floor (evaluators/precision.py) can fail them."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_init_inputs() -> list:
    return []


def _case(m: int, k: int, n: int, device: str) -> tuple:
    return torch.randn(m, k, device=device), torch.randn(k, n, device=device)


def get_inputs(device="cpu") -> dict[str, tuple]:
    return {"M2048_K2048_N2048": _case(2048, 2048, 2048, device)}


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    return {"M64_K96_N80": _case(64, 96, 80, device), "M33_K65_N17": _case(33, 65, 17, device)}


TOLERANCES = {torch.float32: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    a, b = case
    return 2 * a.shape[0] * a.shape[1] * b.shape[1]


def BYTES(case) -> int:
    a, b = case
    return (a.numel() + b.numel() + a.shape[0] * b.shape[1]) * a.element_size()
