"""Activation rows (forward and backward), elementwise family; conventions as in ``table_elementwise``.

Each body follows ATen's CPU/CUDA formula for the overload (same branches and thresholds), evaluated in
fp32: e.g. gelu is the erf form, softplus switches to the identity above ``threshold`` and backward ops
take (grad_output, input) or (grad_output, result) exactly as their ATen schemas do.
"""

from __future__ import annotations

from kernelevolve.aten.table_elementwise import FI, TR, ew

A = "activation"
B = "activation_backward"
GELU_PDF = "0.3989422804014327 * tl.exp(-0.5 * x * x)"  # 1/sqrt(2 pi) exp(-x^2/2)
GELU_CDF = "0.5 * (1.0 + tl.erf(x * 0.7071067811865476))"

ACTIVATIONS = (
    ew("relu.default", A, "x", "relu.default(x)", "tl.maximum(x, 0, NAN)", FI),
    ew("gelu.default", A, "x:wide", "gelu.default(x)", f"x * {GELU_CDF}", tol=TR, flops=14),
    ew("silu.default", A, "x:wide", "silu.default(x)", "x / (1.0 + tl.exp(-x))", tol=TR, flops=7),
    ew("hardtanh.default", A, "x:wide", "hardtanh.default(x, -2.0, 2.0)", "tl.clamp(x, -2.0, 2.0, NAN)", flops=2),
    ew("hardswish.default", A, "x:wide", "hardswish.default(x)", "x * tl.clamp(x + 3.0, 0.0, 6.0, NAN) / 6.0",
       flops=5),
    ew("hardsigmoid.default", A, "x:wide", "hardsigmoid.default(x)", "tl.clamp(x + 3.0, 0.0, 6.0, NAN) / 6.0",
       flops=4),
    ew("leaky_relu.default", A, "x", "leaky_relu.default(x, 0.1)", "tl.where(x > 0, x, x * 0.1)", flops=2),
    ew("elu.default", A, "x", "elu.default(x, 1.5)", "tl.where(x > 0, x, 1.5 * _expm1(x))", tol=TR, flops=20),
    ew("softplus.default", A, "x:wide", "softplus.default(x, 2.0, 10.0)",
       "tl.where(x * 2.0 > 10.0, x, _log1p(tl.exp(x * 2.0)) / 2.0)", tol=TR, flops=25),
    ew("mish.default", A, "x:wide", "mish.default(x)", "x * _tanh(_log1p(tl.exp(x)))", tol=TR, flops=50),
    ew("logit.default", A, "x:prob", "logit.default(x, 1e-6)",
       "c = tl.minimum(tl.maximum(x, 1e-6), 1.0 - 1e-6)\ntl.log(c / (1.0 - c))", tol=TR, flops=8),
    ew("threshold.default", A, "x", "threshold.default(x, 0.5, -1.0)", "tl.where(x <= 0.5, -1.0, x)", FI),
    ew("hardshrink.default", A, "x", "hardshrink.default(x, 0.5)", "tl.where((x >= -0.5) & (x <= 0.5), 0.0, x)",
       flops=2),
    # --- backward: (grad_output, input or result) -> grad_input ----------------------------------------
    ew("gelu_backward.default", B, "grad x:wide", "gelu_backward.default(grad, x)",
       f"grad * ({GELU_CDF} + x * {GELU_PDF})", tol=TR, flops=20),
    ew("silu_backward.default", B, "grad x:wide", "silu_backward.default(grad, x)",
       "s = tl.sigmoid(x)\ngrad * s * (1.0 + x * (1.0 - s))", tol=TR, flops=12),
    ew("sigmoid_backward.default", B, "grad out:unit01", "sigmoid_backward.default(grad, out)",
       "grad * (1.0 - out) * out", flops=3),
    ew("tanh_backward.default", B, "grad out:unit", "tanh_backward.default(grad, out)", "grad * (1.0 - out * out)",
       flops=3),
    ew("threshold_backward.default", B, "grad x", "threshold_backward.default(grad, x, 0.0)",
       "tl.where(x <= 0.0, 0.0, grad)", FI),
    ew("hardtanh_backward.default", B, "grad x:wide", "hardtanh_backward.default(grad, x, -2.0, 2.0)",
       "tl.where((x <= -2.0) | (x >= 2.0), 0.0, grad)", flops=2),
    ew("leaky_relu_backward.default", B, "grad x", "leaky_relu_backward.default(grad, x, 0.1, False)",
       "tl.where(x > 0, grad, grad * 0.1)", flops=2),
    ew("elu_backward.default", B, "grad x", "elu_backward.default(grad, 1.5, 1.0, 1.0, False, x)",
       "tl.where(x <= 0, grad * 1.5 * tl.exp(x), grad)", tol=TR, flops=7),
    ew("softplus_backward.default", B, "grad x:wide", "softplus_backward.default(grad, x, 2.0, 10.0)",
       "z = tl.exp(x * 2.0)\ntl.where(x * 2.0 > 10.0, grad, grad * z / (z + 1.0))", tol=TR, flops=10),
    ew("hardswish_backward.default", B, "grad x:kink3", "hardswish_backward.default(grad, x)",
       "tl.where(x < -3.0, 0.0, tl.where(x <= 3.0, grad * (x / 3.0 + 0.5), grad))", flops=4),
    ew("hardsigmoid_backward.default", B, "grad x:wide", "hardsigmoid_backward.default(grad, x)",
       "tl.where((x > -3.0) & (x < 3.0), grad / 6.0, 0.0)", flops=3),
    ew("mish_backward.default", B, "grad x:wide", "mish_backward.default(grad, x)",
       "sig = tl.sigmoid(x)\nt = _tanh(_log1p(tl.exp(x)))\ngrad * (t + x * sig * (1.0 - t * t))", tol=TR, flops=60),
    ew("logit_backward.default", B, "grad x:prob", "logit_backward.default(grad, x, 1e-6)",
       "tl.where((x < 1e-6) | (x > 1.0 - 1e-6), 0.0, grad / (x * (1.0 - x)))", tol=TR, flops=5),
)
