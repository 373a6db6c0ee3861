"""Activation rows (forward and backward), elementwise family; conventions as in ``table_elementwise``.

Backward ops take (grad_output, input) or (grad_output, result) exactly as their ATen schemas do.
"""

from __future__ import annotations

from kernelevolve.aten.table_elementwise import FI, TR, ew

A = "activation"
B = "activation_backward"

ACTIVATIONS = (
    ew("relu.default", A, "x", "relu.default(x)", FI),
    ew("gelu.default", A, "x:wide", "gelu.default(x)", tol=TR, flops=14),
    ew("silu.default", A, "x:wide", "silu.default(x)", tol=TR, flops=7),
    ew("hardtanh.default", A, "x:wide", "hardtanh.default(x, -2.0, 2.0)", flops=2),
    ew("hardswish.default", A, "x:wide", "hardswish.default(x)", flops=5),
    ew("hardsigmoid.default", A, "x:wide", "hardsigmoid.default(x)", flops=4),
    ew("leaky_relu.default", A, "x", "leaky_relu.default(x, 0.1)", flops=2),
    ew("elu.default", A, "x", "elu.default(x, 1.5)", tol=TR, flops=20),
    ew("softplus.default", A, "x:wide", "softplus.default(x, 2.0, 10.0)", tol=TR, flops=25),
    ew("mish.default", A, "x:wide", "mish.default(x)", tol=TR, flops=50),
    ew("logit.default", A, "x:prob", "logit.default(x, 1e-6)", tol=TR, flops=8),
    ew("threshold.default", A, "x", "threshold.default(x, 0.5, -1.0)", FI),
    ew("hardshrink.default", A, "x", "hardshrink.default(x, 0.5)", flops=2),
    # --- backward: (grad_output, input or result) -> grad_input ----------------------------------------
    ew("gelu_backward.default", B, "grad x:wide", "gelu_backward.default(grad, x)", tol=TR, flops=20),
    ew("silu_backward.default", B, "grad x:wide", "silu_backward.default(grad, x)", tol=TR, flops=12),
    ew("sigmoid_backward.default", B, "grad out:unit01", "sigmoid_backward.default(grad, out)", flops=3),
    ew("tanh_backward.default", B, "grad out:unit", "tanh_backward.default(grad, out)", flops=3),
    ew("threshold_backward.default", B, "grad x", "threshold_backward.default(grad, x, 0.0)", FI),
    ew("hardtanh_backward.default", B, "grad x:wide", "hardtanh_backward.default(grad, x, -2.0, 2.0)", flops=2),
    ew("leaky_relu_backward.default", B, "grad x", "leaky_relu_backward.default(grad, x, 0.1, False)", flops=2),
    ew("elu_backward.default", B, "grad x", "elu_backward.default(grad, 1.5, 1.0, 1.0, False, x)", tol=TR, flops=7),
    ew("softplus_backward.default", B, "grad x:wide", "softplus_backward.default(grad, x, 2.0, 10.0)", tol=TR,
       flops=10),
    ew("hardswish_backward.default", B, "grad x:kink3", "hardswish_backward.default(grad, x)", flops=4),
    ew("hardsigmoid_backward.default", B, "grad x:wide", "hardsigmoid_backward.default(grad, x)", flops=3),
    ew("mish_backward.default", B, "grad x:wide", "mish_backward.default(grad, x)", tol=TR, flops=60),
    ew("logit_backward.default", B, "grad x:prob", "logit_backward.default(grad, x, 1e-6)", tol=TR, flops=5),
)
