"""Normalization, indexing and layout rows; their cases are explicit (shapes relate several arguments).

A case is written as ``c(tag, (domain, shape, dtype), ...)``; domains ``index:V`` and ``perm:V`` draw
int64 positions below V (``perm``: distinct along the last dim), ``softmax``/``logsoftmax`` draw valid
forward outputs for the backward ops, ``var`` positive variances.
"""

from __future__ import annotations

from kernelevolve.aten.inputs import SHORT, recipe, shape_name
from kernelevolve.aten.op import AtenOp, parse_args

N = "normalization"
X = "indexing"
O = "other"  # noqa: E741


def c(tag: str, *args: tuple[str, tuple[int, ...], str]) -> tuple[str, tuple]:
    first = recipe(*args[0])
    return f"{shape_name(first[1])}{tag}_{SHORT[first[2]]}", tuple(recipe(*a) for a in args)


def row(name: str, family: str, category: str, args: str, call: str, kernel: str, test: list, prod: list,
        tol: str, flops: float = 0, bandwidth_bound: bool = True, **params) -> AtenOp:
    dtypes = tuple(dict.fromkeys(case[1][0][2] for case in test))
    params.update(cases=dict(test), prod_cases=dict(prod))
    return AtenOp(name, family, category, parse_args(args), f"torch.ops.aten.{call}", dtypes, kernel, flops, tol,
                  bandwidth_bound, tuple(sorted(params.items())))


def _rowwise(args: list[tuple[str, str]], shapes, dtypes, tags=None):
    """Cases for ops over the last dim: the first argument (and grad/out) has the shape, weights its last dim."""
    out = []
    for i, (shape, dt) in enumerate(zip(shapes, dtypes, strict=True)):
        recipes = [(args[0][1], shape, dt)] + [(d, shape if n in ("grad", "out") else shape[-1:], dt)
                                                for n, d in args[1:]]
        out.append(c(tags[i] if tags else "", *recipes))
    return out


def _norm_rows(args):
    arg_list = [(a.name, a.domain) for a in parse_args(args)]
    test = _rowwise(arg_list, [(7, 33), (16, 1000), (3, 5, 67), (4, 4099), (5, 1), (0, 16)],
                    ["float32", "float16", "bfloat16", "float32", "float32", "float32"],
                    ["", "", "", "", "", "_empty"])
    prod = _rowwise(arg_list, [(4096, 4096), (8192, 1024)], ["float32", "bfloat16"])
    return test, prod


def _channel(shapes, dtypes, extra_domains, tag=""):
    """x of ``shape`` plus per-channel vectors (dim 1) with the given domains."""
    return [c(tag, ("normal", s, d), *[(dom, (s[1],), d) for dom in extra_domains]) for s, d in zip(shapes, dtypes,
                                                                                                        strict=True)]


def _norm(name, args, call, kernel, flops, cases=None, **params):
    test, prod = cases or _norm_rows(args)
    return row(name, "norm", N, args, call, kernel, test, prod, "norm", flops, **params)


_GN_SHAPES = [(2, 8, 33), (3, 16, 5, 7), (1, 4, 1000), (2, 12, 1)]
_GN_DT = ["float32", "float16", "bfloat16", "float32"]
_BN_SHAPES = [(4, 6, 33), (3, 8, 5, 7), (2, 4, 1000), (16, 5)]
NORMS = (
    _norm("native_layer_norm.default", "x w b", "native_layer_norm.default(x, [x.shape[-1]], w, b, 1e-5)",
          "layer_norm", 8),
    _norm("_softmax.default", "x:wide", "_softmax.default(x, -1, False)", "softmax", 5),
    _norm("_log_softmax.default", "x:wide", "_log_softmax.default(x, -1, False)", "log_softmax", 5),
    _norm("_softmax_backward_data.default", "grad out:softmax",
          "_softmax_backward_data.default(grad, out, -1, out.dtype)", "softmax_backward", 4),
    _norm("_log_softmax_backward_data.default", "grad out:logsoftmax",
          "_log_softmax_backward_data.default(grad, out, -1, out.dtype)", "log_softmax_backward", 5),
    _norm("rms_norm.default", "x w", "rms_norm.default(x, [x.shape[-1]], w, 1e-6)", "rms_norm", 4),
    # HxW as a size of a view, not Size.numel(): export keeps the one symbolic and fixes the other at the traced
    # value, which would pin a draft to its test case's length
    _norm("native_group_norm.default", "x w b",
          "native_group_norm.default(x, w, b, x.shape[0], x.shape[1], x.flatten(2).shape[-1], 4, 1e-5)",
          "group_norm", 8,
          cases=(_channel(_GN_SHAPES, _GN_DT, ["normal", "normal"]) + _channel([(0, 8, 5)], ["float32"],
                                                                               ["normal", "normal"], "_empty"),
                 _channel([(16, 128, 4096), (32, 256, 1024)], ["float32", "bfloat16"], ["normal", "normal"]))),
    _norm("_native_batch_norm_legit_no_training.default", "x w b rm rv:var",
          "_native_batch_norm_legit_no_training.default(x, w, b, rm, rv, 0.1, 1e-5)[0]", "batch_norm_eval", 4,
          cases=(_channel(_BN_SHAPES, _GN_DT, ["normal"] * 3 + ["var"]) + _channel([(0, 6, 5)], ["float32"],
                                                                                 ["normal"] * 3 + ["var"], "_empty"),
                 _channel([(64, 256, 1024), (64, 256, 1024)], ["float32", "bfloat16"], ["normal"] * 3 + ["var"]))),
)


def _gather(name, args, call, kernel, test, prod, bandwidth_bound=True, tol="exact", flops=0, **params):
    return row(name, "gather", X, args, call, kernel, test, prod, tol, flops, bandwidth_bound, **params)


_IDX_TEST = [c("", ("normal", (50, 33), "float32"), ("index:50", (4, 9), "int64")),
             c("", ("normal", (1000, 64), "float16"), ("index:1000", (37,), "int64")),
             c("", ("normal", (40, 63), "bfloat16"), ("index:40", (13,), "int64")),
             c("", ("normal", (64, 1), "int32"), ("index:64", (3, 5, 2), "int64")),
             c("_empty", ("normal", (20, 16), "float32"), ("index:20", (0,), "int64"))]
_IDX_PROD = [c("", ("normal", (32768, 1024), "float32"), ("index:32768", (8, 1024), "int64")),
             c("", ("normal", (32768, 1024), "bfloat16"), ("index:32768", (8, 1024), "int64"))]
_SEL_TEST = [c("", ("normal", (50, 33), "float32"), ("index:50", (17,), "int64")),
             c("", ("normal", (1000,), "float16"), ("index:1000", (300,), "int64")),
             c("", ("normal", (40, 7, 9), "bfloat16"), ("index:40", (13,), "int64")),
             c("", ("normal", (64, 1), "int32"), ("index:64", (99,), "int64")),
             c("_empty", ("normal", (20, 16), "float32"), ("index:20", (0,), "int64"))]
_SEL_PROD = [c("", ("normal", (32768, 1024), dt), ("index:32768", (8192,), "int64")) for dt in ("float32", "bfloat16")]
_G2 = [((7, 33), (7, 20), "float32"), ((3, 5, 67), (3, 5, 100), "float16"), ((16, 1000), (16, 1000), "bfloat16"),
       ((6, 9), (6, 4), "int64")]


def _g_cases(shapes, src=False, perm=False, dtype_override=None):
    out = []
    for xs, ids, dt in shapes:
        dt = dtype_override.get(dt, dt) if dtype_override else dt
        idx = (f"{'perm' if perm else 'index'}:{xs[-1]}", ids, "int64")
        extra = [("normal", ids, dt)] if src else []
        out.append(c("", ("normal", xs, dt), idx, *extra))
    xs, dt = (4, 10), "float32"
    src_empty = [("normal", (4, 0), dt)] if src else []
    out.append(c("_empty", ("normal", xs, dt), ("index:10", (4, 0), "int64"), *src_empty))
    return out


_NOHALF = {"float16": "float32", "bfloat16": "int32"}  # fp32 atomics and integer atomics only
_EDB_V = 8192
GATHERS = (
    _gather("index_select.default", "x idx", "index_select.default(x, 0, idx)", "index_select", _SEL_TEST, _SEL_PROD),
    _gather("embedding.default", "weight idx", "embedding.default(weight, idx)", "index_select", _IDX_TEST, _IDX_PROD),
    _gather("index.Tensor", "x idx", "index.Tensor(x, [idx])", "index_select", _IDX_TEST, _IDX_PROD),
    _gather("gather.default", "x idx", "gather.default(x, -1, idx)", "gather", _g_cases(_G2),
            _g_cases([((4096, 4096), (4096, 4096), "float32"), ((8192, 1024), (8192, 1024), "bfloat16")])[:2]),
    _gather("take.default", "x idx", "take.default(x, idx)", "take",
            [c("", ("normal", (7, 33), "float32"), ("index:231", (500,), "int64")),
             c("", ("normal", (1000,), "bfloat16"), ("index:1000", (3, 40), "int64")),
             c("", ("normal", (3, 5, 67), "int32"), ("index:1005", (4099,), "int64")),
             c("_empty", ("normal", (7, 33), "float16"), ("index:231", (0,), "int64"))],
            [c("", ("normal", (4096, 4096), "float32"), ("index:16777216", (4194304,), "int64")),
             c("", ("normal", (4096, 4096), "bfloat16"), ("index:16777216", (4194304,), "int64"))]),
    _gather("scatter_add.default", "x idx src", "scatter_add.default(x, -1, idx, src)", "scatter_add",
            _g_cases(_G2, src=True, dtype_override=_NOHALF),
            _g_cases([((4096, 4096), (4096, 4096), "float32"), ((8192, 1024), (8192, 1024), "int32")], src=True)[:2],
            bandwidth_bound=False, tol="reduction", flops=1),
    _gather("scatter.src", "x idx src", "scatter.src(x, -1, idx, src)", "scatter", _g_cases(_G2, src=True, perm=True),
            _g_cases([((4096, 4096), (4096, 2048), "float32"), ((8192, 1024), (8192, 512), "bfloat16")], src=True,
                     perm=True)[:2]),
    _gather("index_add.default", "x idx src", "index_add.default(x, 0, idx, src)", "index_add",
            [c("", ("normal", (50, 33), "float32"), ("index:50", (80,), "int64"), ("normal", (80, 33), "float32")),
             c("", ("normal", (9, 4, 5), "int32"), ("index:9", (30,), "int64"), ("normal", (30, 4, 5), "int32")),
             c("", ("normal", (1000,), "float32"), ("index:1000", (300,), "int64"), ("normal", (300,), "float32")),
             c("_empty", ("normal", (20, 16), "float32"), ("index:20", (0,), "int64"), ("normal", (0, 16), "float32"))],
            [c("", ("normal", (32768, 1024), "float32"), ("index:32768", (16384,), "int64"),
               ("normal", (16384, 1024), "float32"))], bandwidth_bound=False, tol="reduction", flops=1),
    _gather("embedding_dense_backward.default", "grad idx",
            f"embedding_dense_backward.default(grad, idx, {_EDB_V}, -1, False)", "embedding_backward",
            [c("", ("normal", (4, 9, 33), "float32"), (f"index:{_EDB_V}", (4, 9), "int64")),
             c("", ("normal", (500, 8), "float32"), ("index:50", (500,), "int64")),
             c("", ("normal", (2, 3, 5, 1), "float32"), ("index:3", (2, 3, 5), "int64")),
             c("_empty", ("normal", (0, 16), "float32"), (f"index:{_EDB_V}", (0,), "int64"))],
            [c("", ("normal", (8, 1024, 1024), "float32"), (f"index:{_EDB_V}", (8, 1024), "int64"))],
            bandwidth_bound=False, tol="reduction", flops=1, num_weights=_EDB_V),
    _gather("bucketize.Tensor", "x bnd", "bucketize.Tensor(x, bnd)", "bucketize",
            [c("", ("small", (7, 33), "float32"), ("sorted", (100,), "float32")),
             c("", ("small", (1000,), "float16"), ("sorted", (7,), "float16")),
             c("", ("small", (3, 5, 67), "bfloat16"), ("sorted", (1,), "bfloat16")),
             c("_empty", ("small", (0, 16), "float32"), ("sorted", (10,), "float32"))],
            [c("", ("normal", (4096, 4096), "float32"), ("sorted", (1024,), "float32"))], bandwidth_bound=False),
)


def _layout(name, args, call, kernel, test, prod):
    return row(name, "layout", O, args, call, kernel, test, prod, "exact")


def _one(shapes, dtypes, domain="normal", tag=None):
    return [c(tag[i] if tag else "", (domain, s, d)) for i, (s, d) in enumerate(zip(shapes, dtypes, strict=True))]


_LT_DT = ["float32", "float16", "bfloat16", "int32", "bool", "float32"]
_LT = _one([(7, 33), (3, 17, 9), (40, 40), (5, 1), (6, 6), (0, 5)], _LT_DT, tag=[""] * 5 + ["_empty"])
_LT_PROD = _one([(4096, 4096), (4096, 4096)], ["float32", "bfloat16"])
_ND = _one([(7, 33), (3, 5, 67), (4099, 2), (6, 1), (4, 3, 2, 5), (0, 5)], _LT_DT, tag=[""] * 5 + ["_empty"])
_1D = _one([(1000,), (7, 33), (4099,), (5, 1), (6, 6), (0, 5)], _LT_DT, tag=[""] * 5 + ["_empty"])


def _pair(shapes, dtypes, tag=""):
    return [c(tag, ("normal", a, d0), ("normal", b, d1)) for (a, b), (d0, d1) in zip(shapes, dtypes, strict=True)]


LAYOUTS = (
    _layout("triu.default", "x", "triu.default(x, 1)", "triu", _LT, _LT_PROD),
    _layout("tril.default", "x", "tril.default(x, -1)", "tril", _LT, _LT_PROD),
    _layout("flip.default", "x", "flip.default(x, [0, -1])", "flip", _ND, _LT_PROD),
    _layout("cat.default", "x y", "cat.default([x, y], -1)", "cat",
            _pair([((7, 33), (7, 20)), ((3, 5, 67), (3, 5, 1)), ((4099,), (1000,)), ((6, 2), (6, 0))],
                  [("float32",) * 2, ("bfloat16",) * 2, ("int64",) * 2, ("bool",) * 2])
            + _pair([((7, 33), (7, 9))], [("float16", "float32")], "_mixed"),
            _pair([((4096, 2048), (4096, 2048)), ((4096, 2048), (4096, 2048))],
                  [("float32",) * 2, ("bfloat16",) * 2])),
    _layout("stack.default", "x y", "stack.default([x, y], -1)", "stack",
            _pair([((7, 33), (7, 33)), ((3, 5, 67), (3, 5, 67)), ((1000,), (1000,)), ((0, 4), (0, 4))],
                  [("float32",) * 2, ("float16",) * 2, ("int32",) * 2, ("float32",) * 2]),
            _pair([((4096, 2048), (4096, 2048)), ((4096, 2048), (4096, 2048))],
                  [("float32",) * 2, ("bfloat16",) * 2])),
    _layout("constant_pad_nd.default", "x", "constant_pad_nd.default(x, [2, 3], 1)", "pad", _1D, _LT_PROD),
    _layout("roll.default", "x", "roll.default(x, [3], [-1])", "roll", _1D, _LT_PROD),
    _layout("repeat.default", "x", "repeat.default(x, [2, 3])", "repeat", _1D,
            _one([(2048, 1024), (2048, 1024)], ["float32", "bfloat16"])),
)
