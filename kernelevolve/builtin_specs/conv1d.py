"""1-D convolution operator spec: the paper's production shape B x Cin x Cout x L = 2048 x 96 x 96 x 200.

Kernel size 3, padding 1, stride 1, with bias; fp16 and fp32 inputs. The module keeps fp32 parameters
and casts them to the input dtype in forward, so one module (and one state_dict) serves both dtypes.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

C_IN = 96
C_OUT = 96
KERNEL_SIZE = 3
PADDING = 1


class PytorchModel(nn.Module):
    """Reference: ``F.conv1d`` with the weights cast to the input dtype."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(C_IN, C_OUT, KERNEL_SIZE, padding=PADDING)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.conv.weight.to(x.dtype)
        b = self.conv.bias.to(x.dtype)
        return F.conv1d(x, w, b, padding=PADDING)


def extra_baselines(reference: PytorchModel) -> dict:
    """The paper's second baseline: conv1d as a conv2d over [B, C, 1, L] in channels-last (NHWC) memory
    format, which steers cuDNN to its NHWC kernels. The input's layout change is part of the timed call
    (the op receives NCL input), the weight's is done once, as a deployment would."""
    prepared: dict[torch.dtype, tuple[torch.Tensor, torch.Tensor]] = {}

    def conv2d_channels_last(x: torch.Tensor) -> torch.Tensor:
        if x.dtype not in prepared:
            w = reference.conv.weight.detach().to(x.dtype).unsqueeze(2)
            prepared[x.dtype] = (w.contiguous(memory_format=torch.channels_last),
                                 reference.conv.bias.detach().to(x.dtype))
        w, b = prepared[x.dtype]
        x4 = x.unsqueeze(2).contiguous(memory_format=torch.channels_last)
        return F.conv2d(x4, w, b, padding=(0, PADDING)).squeeze(2)

    return {"conv2d_channels_last": conv2d_channels_last}


def get_init_inputs() -> list:
    return []


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases first (the evaluator seeds torch before calling)."""
    return {
        "prod_fp16": (torch.randn(2048, C_IN, 200, device=device, dtype=torch.float16),),
        "prod_fp32": (torch.randn(2048, C_IN, 200, device=device),),
    }


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter: L not a multiple of any block, both dtypes."""
    return {
        "2x96x37_fp32": (torch.randn(2, C_IN, 37, device=device),),
        "2x96x37_fp16": (torch.randn(2, C_IN, 37, device=device, dtype=torch.float16),),
        # longer than one 256-wide l-block: the k-1 / k+1 taps must read across block boundaries
        "1x96x300_fp16": (torch.randn(1, C_IN, 300, device=device, dtype=torch.float16),),
    }


# fp16: each output is a 288-term (96 x 3) dot product of N(0,1) activations and U(-1/17, 1/17)
# weights, so outputs are O(1) (|y| up to ~4) and both sides round the fp32 sum to fp16 once: 1 ulp is
# 1e-3 to 2e-3 there. Measured max abs error of the seed vs the reference: 9.8e-4 on these test cases
# (interpreter vs CPU) and 2.0e-3 on prod_fp16 (H200 vs cuDNN), i.e. 1 ulp. 1e-2 + 1e-2*|y| leaves a
# 5-10x margin for other summation orders while catching a wrong tap or channel (errors of ~0.1).
# fp32 at 1e-4 assumes an IEEE reference: on a GPU the evaluator must turn off cuDNN's default TF32
# (torch.backends.cudnn.allow_tf32 = False), which alone moves prod_fp32 by up to 9.7e-4.
TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2)}


def FLOPS(case) -> int:
    x = case[0]
    b, _, length = x.shape
    return 2 * b * C_OUT * length * C_IN * KERNEL_SIZE  # one multiply-add per (co, l, ci, k)


def BYTES(case) -> int:
    x = case[0]
    b, _, length = x.shape
    out = b * C_OUT * length * x.element_size()
    params = (C_OUT * C_IN * KERNEL_SIZE + C_OUT) * 4  # fp32 weights and bias, read once
    return x.numel() * x.element_size() + out + params
