"""Elementwise rows of the suite: unary, transcendental, binary, bitwise, comparison, logical, casts.

A row chooses the op and its inputs only: the overload's call, each argument's value domain, the dtypes, the
FLOPs per element and the tolerance class. Its draft comes from the general lowering (``kernelevolve.lowering``)
like any other reference's. Params: ``bcast`` adds row-broadcast cases, ``mixed`` adds mixed-dtype cases
(dtypes of the value arguments), ``reads`` names the arguments the op actually reads (for BYTES), ``cases`` /
``prod_cases`` replace the generated ones.
"""

from __future__ import annotations

from kernelevolve.aten.inputs import recipe
from kernelevolve.aten.op import AtenOp, parse_args

F = ("float32", "float16", "bfloat16")
I = ("int32", "int64")  # noqa: E741
FI = F + I
IB = I + ("bool",)
ALL = FI + ("bool",)
TR = "transcendental"
HALF_MIX = (("float16", "float32"),)


def ew(name: str, category: str, args: str, call: str, dtypes: tuple[str, ...] = F, flops: float = 1,
       tol: str = "default", **params) -> AtenOp:
    return AtenOp(name, "elementwise", category, parse_args(args), f"torch.ops.aten.{call}", dtypes, "", flops, tol,
                  params=tuple(sorted(params.items())))


def _explicit(arg_names: str, specs: list[tuple[str, tuple, tuple[str, ...]]]) -> dict:
    """Cases from (tag, shape, per-argument dtypes); domains come from the argument list."""
    args = parse_args(arg_names)
    out = {}
    for tag, shape, dtypes in specs:
        out[tag] = tuple(recipe(a.domain, shape, d) for a, d in zip(args, dtypes, strict=True))
    return out


_COPY_ARGS = "dst src:wide"
_COPY_TEST = _explicit(_COPY_ARGS, [
    ("1000_fp32_to_bf16", (1000,), ("bfloat16", "float32")), ("7x33_fp32_to_i32", (7, 33), ("int32", "float32")),
    ("3x5x67_i64_to_fp32", (3, 5, 67), ("float32", "int64")), ("4099_fp32_to_bool", (4099,), ("bool", "float32")),
    ("257_bf16_to_fp16", (257,), ("float16", "bfloat16")), ("0x16_empty_fp16_to_fp32", (0, 16), ("float32", "float16")),
])
_COPY_TEST["7x33_row_fp32_to_fp16"] = (recipe("normal", (7, 33), "float16"), recipe("wide", (33,), "float32"))
_COPY_PROD = _explicit(_COPY_ARGS, [("4096x4096_fp32_to_bf16", (4096, 4096), ("bfloat16", "float32")),
                                    ("4096x4096_fp32_to_i32", (4096, 4096), ("int32", "float32"))])
_CAST_TEST = _explicit("x:wide", [("1000_fp32", (1000,), ("float32",)), ("7x33_bf16", (7, 33), ("bfloat16",)),
                                  ("3x5x67_i32", (3, 5, 67), ("int32",)), ("4099_bool", (4099,), ("bool",)),
                                  ("257_i64", (257,), ("int64",)), ("0x16_empty_fp32", (0, 16), ("float32",))])
_CAST_PROD = _explicit("x:wide", [("4096x4096_fp32", (4096, 4096), ("float32",)),
                                  ("4096x4096_bf16", (4096, 4096), ("bfloat16",))])

ELEMENTWISE: tuple[AtenOp, ...] = (
    # --- unary -------------------------------------------------------------------------------------
    ew("abs.default", "unary", "x", "abs.default(x)", FI),
    ew("neg.default", "unary", "x", "neg.default(x)", FI),
    ew("reciprocal.default", "unary", "x:nonzero", "reciprocal.default(x)"),
    ew("sqrt.default", "unary", "x:pos", "sqrt.default(x)"),
    ew("rsqrt.default", "unary", "x:pos", "rsqrt.default(x)", tol=TR),
    ew("sign.default", "unary", "x:small", "sign.default(x)", FI),
    ew("floor.default", "unary", "x:wide", "floor.default(x)"),
    ew("ceil.default", "unary", "x:wide", "ceil.default(x)"),
    ew("round.default", "unary", "x:halves", "round.default(x)", flops=6),
    ew("trunc.default", "unary", "x:wide", "trunc.default(x)"),
    ew("frac.default", "unary", "x:wide", "frac.default(x)", flops=2),
    ew("clamp.default", "unary", "x", "clamp.default(x, -0.5, 0.5)", flops=2),
    ew("clamp_min.default", "unary", "x", "clamp_min.default(x, -0.25)"),
    ew("clamp_max.default", "unary", "x", "clamp_max.default(x, 0.25)"),
    # --- transcendental ----------------------------------------------------------------------------
    ew("exp.default", TR, "x", "exp.default(x)", tol=TR, flops=4),
    ew("exp2.default", TR, "x", "exp2.default(x)", tol=TR, flops=4),
    ew("expm1.default", TR, "x", "expm1.default(x)", tol=TR, flops=20),
    ew("log.default", TR, "x:pos", "log.default(x)", tol=TR, flops=4),
    ew("log2.default", TR, "x:pos", "log2.default(x)", tol=TR, flops=4),
    ew("log1p.default", TR, "x:gtm1", "log1p.default(x)", tol=TR, flops=20),
    ew("sin.default", TR, "x", "sin.default(x)", tol=TR, flops=4),
    ew("cos.default", TR, "x", "cos.default(x)", tol=TR, flops=4),
    ew("tan.default", TR, "x:tan", "tan.default(x)", tol=TR, flops=10),
    ew("tanh.default", TR, "x:wide", "tanh.default(x)", tol=TR, flops=25),
    ew("sigmoid.default", TR, "x:wide", "sigmoid.default(x)", tol=TR, flops=6),
    ew("erf.default", TR, "x", "erf.default(x)", tol=TR, flops=10),
    ew("erfinv.default", TR, "x:unit", "erfinv.default(x)", tol=TR, flops=50),
    ew("asin.default", TR, "x:unit", "asin.default(x)", tol=TR, flops=30),
    ew("acos.default", TR, "x:unit", "acos.default(x)", tol=TR, flops=30),
    ew("atan.default", TR, "x:wide", "atan.default(x)", tol=TR, flops=20),
    ew("asinh.default", TR, "x:wide", "asinh.default(x)", tol=TR, flops=30),
    ew("atanh.default", TR, "x:unit", "atanh.default(x)", tol=TR, flops=25),
    ew("atan2.default", TR, "x y", "atan2.default(x, y)", tol=TR, flops=30, bcast=True),
    ew("pow.Tensor_Scalar", TR, "x", "pow.Tensor_Scalar(x, 3)", FI, flops=2),
    ew("pow.Tensor_Tensor", TR, "x:pos y", "pow.Tensor_Tensor(x, y)", tol=TR, flops=9, bcast=True),
    ew("pow.Scalar", TR, "x", "pow.Scalar(2.5, x)", tol=TR, flops=5),
    # --- binary arithmetic -------------------------------------------------------------------------
    ew("add.Tensor", "binary", "x y", "add.Tensor(x, y, alpha=2)", FI, flops=2, bcast=True,
       mixed=(("float16", "float32"), ("int32", "float32"))),
    ew("add.Scalar", "binary", "x", "add.Scalar(x, 3)", FI),
    ew("sub.Tensor", "binary", "x y", "sub.Tensor(x, y)", FI, bcast=True, mixed=HALF_MIX),
    ew("mul.Tensor", "binary", "x y", "mul.Tensor(x, y)", FI, bcast=True,
       mixed=(("bfloat16", "float32"), ("int64", "float16"))),
    ew("mul.Scalar", "binary", "x", "mul.Scalar(x, 0.5)", FI),
    ew("div.Tensor", "binary", "x y:nonzero", "div.Tensor(x, y)", FI, bcast=True, mixed=HALF_MIX),
    ew("div.Tensor_mode", "binary", "x:wide y:nonzero", 'div.Tensor_mode(x, y, rounding_mode="trunc")', FI, flops=2,
       bcast=True),
    ew("floor_divide.default", "binary", "x:wide y:nonzero", "floor_divide.default(x, y)", FI, flops=6, bcast=True),
    ew("remainder.Tensor", "binary", "x:wide y:nonzero", "remainder.Tensor(x, y)", FI, flops=3, bcast=True),
    ew("remainder.Scalar", "binary", "x:wide", "remainder.Scalar(x, 3)", FI, flops=3),
    ew("fmod.Tensor", "binary", "x:wide y:nonzero", "fmod.Tensor(x, y)", FI, flops=2, bcast=True),
    ew("fmod.Scalar", "binary", "x:wide", "fmod.Scalar(x, 3)", FI, flops=2),
    ew("maximum.default", "binary", "x:special y", "maximum.default(x, y)", FI, bcast=True, mixed=HALF_MIX),
    ew("minimum.default", "binary", "x y:special", "minimum.default(x, y)", FI, bcast=True),
    ew("lerp.Scalar", "binary", "x y", "lerp.Scalar(x, y, 0.3)", flops=3),
    ew("lerp.Tensor", "binary", "x y w:unit01", "lerp.Tensor(x, y, w)", flops=4, bcast=True),
    ew("addcmul.default", "binary", "x y z", "addcmul.default(x, y, z, value=0.5)", flops=3, bcast=True),
    ew("addcdiv.default", "binary", "x y z:nonzero", "addcdiv.default(x, y, z, value=0.5)", flops=3, bcast=True),
    ew("clamp.Tensor", "binary", "x lo hi", "clamp.Tensor(x, lo, hi)", FI, flops=2, bcast=True),
    # --- bitwise (integers and bools) --------------------------------------------------------------
    ew("bitwise_and.Tensor", "logical", "x y", "bitwise_and.Tensor(x, y)", IB, bcast=True),
    ew("bitwise_or.Tensor", "logical", "x y", "bitwise_or.Tensor(x, y)", IB, bcast=True),
    ew("bitwise_xor.Tensor", "logical", "x y", "bitwise_xor.Tensor(x, y)", IB, bcast=True),
    ew("bitwise_not.default", "logical", "x", "bitwise_not.default(x)", IB),
    ew("bitwise_left_shift.Tensor", "logical", "x y:shift", "bitwise_left_shift.Tensor(x, y)", I, bcast=True),
    ew("bitwise_right_shift.Tensor", "logical", "x y:shift", "bitwise_right_shift.Tensor(x, y)", I, bcast=True),
    # --- comparison ----------------------------------------------------------------------------------
    ew("eq.Tensor", "comparison", "x:small y:small", "eq.Tensor(x, y)", FI, bcast=True, mixed=HALF_MIX),
    ew("ne.Tensor", "comparison", "x:small y:small", "ne.Tensor(x, y)", FI, bcast=True),
    ew("lt.Tensor", "comparison", "x:small y:small", "lt.Tensor(x, y)", FI, bcast=True, mixed=(("int32", "float32"),)),
    ew("le.Tensor", "comparison", "x:small y:small", "le.Tensor(x, y)", FI, bcast=True),
    ew("gt.Tensor", "comparison", "x:small y:small", "gt.Tensor(x, y)", FI, bcast=True),
    ew("ge.Tensor", "comparison", "x:small y:small", "ge.Tensor(x, y)", FI, bcast=True),
    ew("gt.Scalar", "comparison", "x:small", "gt.Scalar(x, 1)", FI),
    ew("isnan.default", "comparison", "x:special", "isnan.default(x)"),
    ew("isinf.default", "comparison", "x:special", "isinf.default(x)"),
    ew("isfinite.default", "comparison", "x:special", "isfinite.default(x)"),
    # --- logical -------------------------------------------------------------------------------------
    ew("logical_not.default", "logical", "x:small", "logical_not.default(x)", ALL),
    ew("logical_and.default", "logical", "x:small y:small", "logical_and.default(x, y)", ALL, bcast=True,
       mixed=(("bool", "float32"),)),
    ew("logical_or.default", "logical", "x:small y:small", "logical_or.default(x, y)", ALL, bcast=True),
    ew("logical_xor.default", "logical", "x:small y:small", "logical_xor.default(x, y)", ALL, bcast=True),
    ew("where.self", "logical", "cond:bool x y", "where.self(cond, x, y)", ALL, bcast=True, mixed=HALF_MIX),
    ew("masked_fill.Scalar", "logical", "x mask:bool", "masked_fill.Scalar(x, mask, -2)", FI, bcast=True),
    # --- copies and casts ----------------------------------------------------------------------------
    ew("_to_copy.default", "other", "x:wide", "_to_copy.default(x, dtype=torch.float16)", ALL, flops=0,
       tol="exact", cases=_CAST_TEST, prod_cases=_CAST_PROD),
    ew("copy.default", "other", _COPY_ARGS, "copy.default(dst, src)", ALL, flops=0, tol="exact", reads="src",
       cases=_COPY_TEST, prod_cases=_COPY_PROD),
    ew("clone.default", "other", "x", "clone.default(x)", ALL, flops=0, tol="exact"),
    ew("fill.Scalar", "other", "x", "fill.Scalar(x, 3)", ALL, flops=0, tol="exact", reads=""),
)
