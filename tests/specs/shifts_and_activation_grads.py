"""Integer shifts and the silu/mish backward ops, in the general lowering's pointwise formulas.

Shift amounts run past both ends of [0, bits) (ATen gives 0 there, or the sign for a signed right shift),
through every overload export records (Tensor, Tensor_Scalar, Scalar_Tensor and the ``<<``/``>>``
operators), on signed, unsigned and mixed integer types; the backward ops on fp32/fp16/bf16, with inputs
far enough out that exp overflows."""

import torch
import torch.nn as nn


class PytorchModel(nn.Module):
    def forward(self, x, s, grad, z):
        return (
            torch.bitwise_left_shift(x, s),
            torch.bitwise_right_shift(x, s),
            x << s,
            x >> 3,
            torch.bitwise_left_shift(5, s),
            torch.ops.aten.silu_backward.default(grad, z),
            torch.ops.aten.mish_backward.default(grad, z),
        )


def _case(shape, int_dtype, shift_dtype, lo, hi, float_dtype, device, shift_shape=None):
    x = torch.randint(lo, hi, shape, device=device, dtype=int_dtype)
    bits = torch.iinfo(shift_dtype).bits
    low = 0 if shift_dtype == torch.uint8 else -3
    s = torch.randint(low, bits + 8, shift_shape or shape, device=device, dtype=shift_dtype)
    z = torch.randn(shape, device=device) * 10
    z.view(-1)[:4] = torch.tensor([-1000.0, -100.0, 100.0, 1000.0], device=device)  # exp over- and underflows
    return x, s, torch.randn(shape, device=device).to(float_dtype), z.to(float_dtype)


def get_inputs(device="cpu"):
    return {"4096_i32_fp32": _case((4096,), torch.int32, torch.int32, -1000, 1000, torch.float32, device)}


def get_test_inputs(device="cpu"):
    return {
        "1000_i32_fp32": _case((1000,), torch.int32, torch.int32, -1000, 1000, torch.float32, device),
        "7x33_i64_fp16": _case((7, 33), torch.int64, torch.int64, -(2**40), 2**40, torch.float16, device),
        "3x5x17_i8_bf16": _case((3, 5, 17), torch.int8, torch.int8, -128, 128, torch.bfloat16, device),
        "65_u8_fp32": _case((65,), torch.uint8, torch.uint8, 0, 256, torch.float32, device),
        "7x33_row_i32_i64_fp32": _case((7, 33), torch.int32, torch.int64, -1000, 1000, torch.float32, device,
                                       shift_shape=(33,)),
    }
