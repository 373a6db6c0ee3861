"""Reduction and scan rows: last-dim (``dim=-1``) reductions, full reductions, and last-dim scans.

``kernel`` names the reduction/scan kind (the spec's docstring and its byte rule); ``keepdim`` keeps the reduced
dim as size 1; ``full`` reduces every element to a 0-dim tensor; ``empty_reduce`` adds a case whose reduced
dim is empty (for ops ATen defines there: sums are 0, means and variances NaN, all() True).
"""

from __future__ import annotations

from kernelevolve.aten.op import AtenOp, parse_args
from kernelevolve.aten.table_elementwise import F


def red(name: str, args: str, call: str, kind: str, dtypes: tuple[str, ...], flops: float = 1, **params) -> AtenOp:
    return AtenOp(name, "reduction", "reduction", parse_args(args), f"torch.ops.aten.{call}", dtypes, kind, flops,
                  "reduction", params=tuple(sorted(params.items())))


def scan(name: str, args: str, call: str, kind: str, dtypes: tuple[str, ...], flops: float = 1, **params) -> AtenOp:
    params = {"empty_reduce": True, **params}
    return AtenOp(name, "scan", "scan", parse_args(args), f"torch.ops.aten.{call}", dtypes, kind, flops, "scan",
                  params=tuple(sorted(params.items())))


REDUCTIONS = (
    red("sum.dim_IntList", "x", "sum.dim_IntList(x, [-1])", "sum", F + ("int32", "bool"), empty_reduce=True),
    red("sum.default", "x", "sum.default(x)", "sum", F + ("int32",), full=True, empty_reduce=True),
    red("mean.dim", "x", "mean.dim(x, [-1], True)", "mean", F, keepdim=True, empty_reduce=True),
    red("mean.default", "x", "mean.default(x)", "mean", F, full=True, empty_reduce=True),
    red("amax.default", "x:special", "amax.default(x, [-1])", "amax", F + ("int32",)),
    red("amin.default", "x", "amin.default(x, [-1], True)", "amin", F + ("int64",), keepdim=True),
    red("max.dim", "x:small", "max.dim(x, -1)", "max_dim", F + ("int32",)),
    red("min.dim", "x:small", "min.dim(x, -1, True)", "min_dim", F + ("int64",), keepdim=True),
    red("max.default", "x:special", "max.default(x)", "amax", F + ("int32",), full=True),
    red("min.default", "x", "min.default(x)", "amin", F, full=True),
    red("argmax.default", "x:small", "argmax.default(x, -1)", "argmax", F + ("int32",)),
    red("argmin.default", "x:small", "argmin.default(x, -1, True)", "argmin", F + ("int64",), keepdim=True),
    # fp32 and int32 only: ATen's CPU prod multiplies fp16/bf16 in the storage type (rounding every step; 6%
    # off over a 1000-long row), CUDA's in fp32, so no single half-precision answer exists to match.
    red("prod.dim_int", "x:near1", "prod.dim_int(x, -1)", "prod", ("float32", "int32"), empty_reduce=True),
    red("var.correction", "x", "var.correction(x, [-1], correction=1)", "var", F, flops=4, correction=1,
        empty_reduce=True),
    red("std.correction", "x", "std.correction(x, [-1], correction=0, keepdim=True)", "std", F, flops=4,
        correction=0, keepdim=True),
    red("var_mean.correction", "x", "var_mean.correction(x, [-1], correction=1)", "var_mean", F, flops=4,
        correction=1),
    red("logsumexp.default", "x:wide", "logsumexp.default(x, [-1])", "logsumexp", F, flops=6, empty_reduce=True),
    red("norm.ScalarOpt_dim", "x", "norm.ScalarOpt_dim(x, 2, [-1])", "norm2", F, flops=2, empty_reduce=True),
    red("linalg_vector_norm.default", "x", "linalg_vector_norm.default(x, 1, [-1])", "norm1", F, flops=2,
        empty_reduce=True),
    red("all.dim", "x:mostly", "all.dim(x, -1)", "all", ("bool", "float32", "int32"), empty_reduce=True),
    red("any.dim", "x:small", "any.dim(x, -1, True)", "any", ("bool", "float32", "int32"), keepdim=True,
        empty_reduce=True),
    red("count_nonzero.dim_IntList", "x:small", "count_nonzero.dim_IntList(x, [-1])", "count_nonzero",
        ("float32", "int32", "bool"), empty_reduce=True),
)

SCANS = (
    scan("cumsum.default", "x", "cumsum.default(x, -1)", "cumsum", F + ("int32", "bool"), acc32=True),
    scan("cumprod.default", "x:near1", "cumprod.default(x, -1)", "cumprod", F + ("int32",), acc32=True),
    # tl.associative_scan runs one combine per element in Triton's CPU interpreter: shorter test rows
    scan("cummax.default", "x:small", "cummax.default(x, -1)", "cummax", F + ("int32",), small=True),
    scan("cummin.default", "x:small", "cummin.default(x, -1)", "cummin", F + ("int64",), small=True),
    scan("logcumsumexp.default", "x", "logcumsumexp.default(x, -1)", "logcumsumexp", F, flops=6, small=True,
         acc32=True),
)
