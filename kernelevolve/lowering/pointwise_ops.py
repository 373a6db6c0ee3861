"""Triton expressions for core ATen pointwise ops, in the compute type (fp32 for 16/32-bit floats).

Each entry maps an overload packet name to ``fn(args, kwargs) -> expression``: ``args`` are the operands
as Triton expressions (tensor operands already loaded and converted to the node's compute type, scalars as
literals), ``kwargs`` the node's keyword and trailing scalar arguments plus ``_float`` (a floating output)
and ``_dtype`` (the output's torch dtype). Helpers such as ``_tanh`` come from ``kernelevolve.lowering.mathlib``,
which candidates include when an expression calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Expr = Callable[[list[str], dict[str, Any]], str]
NAN = "propagate_nan=tl.PropagateNan.ALL"
SIGMOID = "1.0 / (1.0 + tl.exp(-{x}))"
SOFTPLUS_TANH = "_tanh(_log1p(tl.exp({x})))"  # tanh(softplus(x)), as mish and ATen's mish_backward take it
GELU_TANH = "0.5 * {x} * (1.0 + _tanh(0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})))"


def lit(value: Any) -> str:
    """A Python scalar as a Triton literal (inf and nan spelled so the source stays valid)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if value != value:
            return "float('nan')"
        if value in (float("inf"), float("-inf")):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    return repr(value)


def _alpha(a: list[str], kw: dict[str, Any]) -> str:
    alpha = kw.get("alpha")
    return a[1] if alpha in (None, 1, "1", "1.0") else f"({a[1]} * {alpha})"


def _pow(a: list[str], kw: dict[str, Any]) -> str:
    x, y = a
    exponent = kw.get("_scalar_exponent")
    if exponent is not None and float(exponent).is_integer() and abs(exponent) <= 8:
        e = int(exponent)
        if e == 0:
            return f"({x} * 0 + 1)"
        prod = " * ".join([f"({x})"] * abs(e))
        return f"({prod})" if e > 0 else f"(1.0 / ({prod}))"
    if exponent == 0.5:
        return f"tl.sqrt({x})"
    # x ** y = exp(y log|x|), negative bases only with integral exponents (odd ones flip the sign)
    odd = f"(tl.floor({y} * 0.5) * 2.0 != tl.floor({y}))"
    mag = f"tl.exp({y} * tl.log(tl.abs({x})))"
    return (f"tl.where({x} >= 0, tl.exp({y} * tl.log({x})), tl.where(tl.floor({y}) == {y}, "
            f"tl.where({odd}, -{mag}, {mag}), float('nan')))")


def _clamp(a: list[str], kw: dict[str, Any]) -> str:
    x, lo, hi = a[0], kw.get("min"), kw.get("max")
    if lo is not None:
        x = f"tl.maximum({x}, {lo}, {NAN})"
    if hi is not None:
        x = f"tl.minimum({x}, {hi}, {NAN})"
    return x


def _div(a: list[str], kw: dict[str, Any]) -> str:
    mode = kw.get("rounding_mode")
    if mode == "trunc":
        half = kw.get("_dtype") in (torch.float16, torch.bfloat16)
        if half:  # ATen rounds a half-precision quotient to its storage type before truncating
            fp16, bf16 = kw["_dtype"] == torch.float16, kw["_dtype"] == torch.bfloat16
            return f"_div_trunc({a[0]}, {a[1]}, True, {fp16}, {bf16})"
        return f"_trunc({a[0]} / {a[1]})" if kw.get("_float") else f"({a[0]} // {a[1]})"
    if mode == "floor":
        # floats: ATen's div_floor_floating (an IEEE quotient of the exact remainder); a floor of the GPU's
        # approximate a / b is off by one next to integers (floor_divide on an H100)
        return f"_floor_divide({a[0]}, {a[1]}, {bool(kw.get('_float'))})"
    return f"({a[0]} / {a[1]})"


def _gelu(a: list[str], kw: dict[str, Any]) -> str:
    x = a[0]
    if kw.get("approximate", "none") == "tanh":
        return GELU_TANH.format(x=x)
    return f"({x} * 0.5 * (1.0 + tl.erf({x} * 0.7071067811865476)))"


def num(kw: dict[str, Any], name: str, default: float) -> str:
    """A scalar argument's literal (already one when the node gave it), else the schema default."""
    value = kw.get(name)
    return lit(default) if value is None else str(value)


def _softplus(a: list[str], kw: dict[str, Any]) -> str:
    beta, threshold = num(kw, "beta", 1.0), num(kw, "threshold", 20.0)
    return f"tl.where({a[0]} * {beta} > {threshold}, {a[0]}, _log1p(tl.exp({a[0]} * {beta})) / {beta})"


def _shift(left: bool) -> Expr:
    """``x << y`` / ``x >> y`` as ATen computes them (CPU and CUDA alike), in the output's integer type of
    ``bits`` bits: a shift amount outside [0, bits) (negative, or too large) gives 0, except that a signed
    right shift then fills with the sign (``x >> (bits - 1)``); inside it, the left shift wraps. The amount
    is clamped before shifting: a hardware or NumPy shift by ``bits`` or more is undefined."""

    def expr(a: list[str], kw: dict[str, Any]) -> str:
        x, y = a
        dtype = kw["_dtype"]
        bits = dtype.itemsize * 8
        ok = f"(({y} >= 0) & ({y} < {bits}))"
        if not left and dtype.is_signed:
            return f"({x} >> tl.where({ok}, {y}, {bits - 1}))"
        return f"tl.where({ok}, {x} {'<<' if left else '>>'} tl.where({ok}, {y}, 0), 0)"

    return expr


def _silu_backward(a: list[str], kw: dict[str, Any]) -> str:
    """grad * s * (1 + x (1 - s)), s = sigmoid(x): ATen's formula (in fp32 for 16-bit inputs, as ATen's)."""
    grad, x = a
    s = f"({SIGMOID.format(x=x)})"
    return f"({grad} * {s} * (1.0 + {x} * (1.0 - {s})))"


def _mish_backward(a: list[str], kw: dict[str, Any]) -> str:
    """grad * (t + x s (1 - t^2)), t = tanh(softplus(x)), s = sigmoid(x): ATen's formula."""
    grad, x = a
    t, s = SOFTPLUS_TANH.format(x=x), f"({SIGMOID.format(x=x)})"
    return f"({grad} * ({t} + {x} * {s} * (1.0 - {t} * {t})))"


def _unary(template: str) -> Expr:
    return lambda a, kw: template.format(x=a[0])


def _binary(template: str) -> Expr:
    return lambda a, kw: template.format(x=a[0], y=a[1])


OPS: dict[str, Expr] = {
    # --- arithmetic ------------------------------------------------------------------------------------
    "add": lambda a, kw: f"({a[0]} + {_alpha(a, kw)})",
    "sub": lambda a, kw: f"({a[0]} - {_alpha(a, kw)})",
    "rsub": lambda a, kw: f"({_alpha(a, kw)} - {a[0]})",
    "mul": _binary("({x} * {y})"),
    "div": _div,
    "neg": _unary("(-{x})"),
    "abs": _unary("tl.abs({x})"),
    "reciprocal": _unary("(1.0 / {x})"),
    "pow": _pow,
    "maximum": _binary(f"tl.maximum({{x}}, {{y}}, {NAN})"),
    "minimum": _binary(f"tl.minimum({{x}}, {{y}}, {NAN})"),
    "fmod": lambda a, kw: f"_fmod({a[0]}, {a[1]}, {kw.get('_float', True)})",
    "remainder": _binary("_remainder({x}, {y})"),
    "sign": _unary("(({x} > 0).to(tl.float32) - ({x} < 0).to(tl.float32))"),
    "sgn": _unary("(({x} > 0).to(tl.float32) - ({x} < 0).to(tl.float32))"),
    "floor": _unary("tl.floor({x})"),
    "ceil": _unary("tl.ceil({x})"),
    "round": _unary("_round_half_even({x})"),
    "trunc": _unary("_trunc({x})"),
    "frac": _unary("({x} - _trunc({x}))"),
    "lerp": lambda a, kw: f"({a[0]} + {a[2]} * ({a[1]} - {a[0]}))",
    "hypot": _binary("tl.sqrt({x} * {x} + {y} * {y})"),
    "clamp": _clamp,
    "clamp_min": lambda a, kw: f"tl.maximum({a[0]}, {a[1]}, {NAN})",
    "clamp_max": lambda a, kw: f"tl.minimum({a[0]}, {a[1]}, {NAN})",
    # --- transcendental --------------------------------------------------------------------------------
    "exp": _unary("tl.exp({x})"),
    "exp2": _unary("tl.exp2({x})"),
    "expm1": _unary("_expm1({x})"),
    "log": _unary("tl.log({x})"),
    "log2": _unary("tl.log2({x})"),
    "log10": _unary("(tl.log({x}) * 0.4342944819032518)"),
    "log1p": _unary("_log1p({x})"),
    "sqrt": _unary("tl.sqrt_rn({x})"),
    "rsqrt": _unary("(1.0 / tl.sqrt_rn({x}))"),
    "sin": _unary("tl.sin({x})"),
    "cos": _unary("tl.cos({x})"),
    "tan": _unary("(tl.sin({x}) / tl.cos({x}))"),
    "tanh": _unary("_tanh({x})"),
    "sinh": _unary("(0.5 * (_expm1({x}) - _expm1(-{x})))"),
    "cosh": _unary("(0.5 * (tl.exp({x}) + tl.exp(-{x})))"),
    "atan": _unary("_atan({x})"),
    "asin": _unary("_asin({x})"),
    "acos": _unary("_acos({x})"),
    "asinh": _unary("_asinh({x})"),
    "atanh": _unary("_atanh({x})"),
    "atan2": _binary("_atan2({x}, {y})"),
    "erf": _unary("tl.erf({x})"),
    "erfinv": _unary("_erfinv({x})"),
    "lgamma": _unary("_lgamma({x})"),
    "sigmoid": _unary(f"({SIGMOID})"),
    # --- activations -----------------------------------------------------------------------------------
    "relu": _unary(f"tl.maximum({{x}}, 0, {NAN})"),
    "gelu": _gelu,
    "silu": _unary("({x} / (1.0 + tl.exp(-{x})))"),
    "hardswish": _unary(f"({{x}} * tl.clamp({{x}} + 3.0, 0.0, 6.0, {NAN}) / 6.0)"),
    "hardsigmoid": _unary(f"(tl.clamp({{x}} + 3.0, 0.0, 6.0, {NAN}) / 6.0)"),
    "mish": _unary(f"({{x}} * {SOFTPLUS_TANH})"),
    "softplus": _softplus,
    "leaky_relu": lambda a, kw: f"tl.where({a[0]} > 0, {a[0]}, {a[0]} * {num(kw, 'negative_slope', 0.01)})",
    # backward (grad_output, input) -> grad_input, ATen's CPU/CUDA formulas
    "silu_backward": _silu_backward,
    "mish_backward": _mish_backward,
    "logit": lambda a, kw: f"tl.log({a[0]} / (1.0 - {a[0]}))",
    # --- comparison, logical, selection ----------------------------------------------------------------
    "eq": _binary("({x} == {y})"),
    "ne": _binary("({x} != {y})"),
    "lt": _binary("({x} < {y})"),
    "le": _binary("({x} <= {y})"),
    "gt": _binary("({x} > {y})"),
    "ge": _binary("({x} >= {y})"),
    "isnan": _unary("({x} != {x})"),
    "isinf": _unary("(tl.abs({x}) == float('inf'))"),
    "logical_not": _unary("({x} == 0)"),
    "logical_and": _binary("(({x} != 0) & ({y} != 0))"),
    "logical_or": _binary("(({x} != 0) | ({y} != 0))"),
    "logical_xor": _binary("(({x} != 0) ^ ({y} != 0))"),
    "bitwise_not": _unary("(~{x})"),
    "bitwise_and": _binary("({x} & {y})"),
    "bitwise_or": _binary("({x} | {y})"),
    "bitwise_xor": _binary("({x} ^ {y})"),
    "bitwise_left_shift": _shift(left=True),
    "bitwise_right_shift": _shift(left=False),
    "__lshift__": _shift(left=True),
    "__rshift__": _shift(left=False),
    "where": lambda a, kw: f"tl.where({a[0]}, {a[1]}, {a[2]})",
    # --- copies and constants: the value itself, converted on store -------------------------------------
    "_to_copy": _unary("{x}"),
    "clone": _unary("{x}"),
    "copy": lambda a, kw: a[1],
    "lift_fresh_copy": _unary("{x}"),
    "scalar_tensor": _unary("{x}"),
    "full": lambda a, kw: a[1],
    "full_like": lambda a, kw: a[1],
    "fill": lambda a, kw: a[1],
    "zeros_like": lambda a, kw: "0",
    "ones_like": lambda a, kw: "1",
    "nan_to_num": lambda a, kw: (f"tl.where({a[0]} != {a[0]}, {num(kw, 'nan', 0.0)}, tl.where({a[0]} == "
                                 f"float('inf'), 3.4028234663852886e+38, tl.where({a[0]} == float('-inf'), "
                                 f"-3.4028234663852886e+38, {a[0]})))"),
}
# Comparisons compute in the operands' promoted type, not the node's (bool) type.
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "logical_not", "logical_and", "logical_or",
               "logical_xor", "where"}
# Ops whose leading arguments are sizes or that take no tensor input: the value is a scalar.
SOURCES = {"scalar_tensor", "full"}


def is_pointwise(name: str) -> bool:
    return name in OPS
