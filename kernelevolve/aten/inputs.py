"""Input recipes for the suite's specs: value domains, case shapes per family, and tolerances.

A case is a tuple of argument recipes ``(domain, shape, dtype)``; the rendered spec carries these recipes
as literal data plus ``GEN_SOURCE`` (the one function that turns a recipe into a tensor), so a spec file
is standalone. Production cases are GPU-sized (2^24 elements, [4096, 4096] / [8192, 1024] rows); test cases
are small, include sizes that are no multiple of any block (1000, 4099, [7, 33]), several dims, an empty
tensor where the op accepts one, every dtype the op is tested in, and row broadcasting where it applies.
"""

from __future__ import annotations

from kernelevolve.aten.op import AtenOp

Recipe = tuple[str, tuple[int, ...], str]
Cases = dict[str, tuple[Recipe, ...]]

GEN_SOURCE = '''
_INT_RANGES = {"small": (-4, 5), "shift": (0, 8), "wide": (-1000, 1000), "pos": (1, 100)}
# domain -> (scale, offset) of U[0, 1): positives, (-1, 1) away from the ends, (-0.9, 4.1) for log1p, ...
_UNIFORM = {"pos": (4, 0.1), "unit": (1.9, -0.95), "unit01": (1, 0), "gtm1": (5, -0.9), "tan": (2.4, -1.2),
            "var": (1, 0.5), "prob": (0.98, 0.01)}


def _gen(domain, shape, dtype, device):
    """One input tensor. ``domain`` keeps values where the op is defined and interesting (see the table)."""
    kind, _, param = domain.partition(":")
    dt = getattr(torch, dtype)
    if kind == "index":  # positions in [0, param)
        return torch.randint(0, int(param), shape, device=device, dtype=dt)
    if kind == "perm":  # distinct positions along the last dim, drawn from [0, param)
        keys = torch.rand(*shape[:-1], int(param), device=device)
        return keys.argsort(dim=-1)[..., : shape[-1]].to(dt).contiguous()
    if dt == torch.bool:
        return torch.rand(shape, device=device) < (0.97 if kind == "mostly" else 0.5)
    if not dt.is_floating_point:
        if kind == "mostly":  # 3% zeros
            keep = torch.rand(shape, device=device) >= 0.03
            return torch.randint(1, 5, shape, device=device, dtype=dt) * keep
        if kind in ("nonzero", "near1"):  # +-[1, 50) or +-1
            mag = torch.randint(1, 50 if kind == "nonzero" else 2, shape, device=device, dtype=dt)
            return mag * (torch.randint(0, 2, shape, device=device, dtype=dt) * 2 - 1)
        lo, hi = _INT_RANGES.get(kind, (-100, 100))
        return torch.randint(lo, hi, shape, device=device, dtype=dt)
    if kind in _UNIFORM:  # affine maps of U[0, 1)
        scale, offset = _UNIFORM[kind]
        return (torch.rand(shape, device=device) * scale + offset).to(dt)
    if kind in ("small", "sorted"):  # small integers as floats: ties and exact zeros
        x = torch.randint(-4, 5, shape, device=device).float()
        return (x.sort(-1).values if kind == "sorted" else x).to(dt)
    n = torch.randn(shape, device=device)
    if kind == "wide":
        x = n * 10
    elif kind == "nonzero":  # |x| in [0.5, 2.5)
        x = (torch.rand(shape, device=device) * 2 + 0.5) * torch.where(n < 0, -1.0, 1.0)
    elif kind == "halves":  # many exact .5 ties
        x = torch.round(n * 8) / 2
    elif kind == "special":
        u = torch.rand(shape, device=device)
        x = torch.where(u < 0.1, float("inf"), torch.where(u < 0.15, float("-inf"), n))
        x = torch.where(u < 0.05, float("nan"), x)  # 5% NaN, 5% +inf, 5% -inf
    elif kind == "near1":
        x = 1 + 0.05 * n
    elif kind == "softmax":
        x = n.softmax(-1)
    elif kind == "logsoftmax":
        x = n.log_softmax(-1)
    elif kind == "kink3":  # N(0, 16) kept 0.1 away from +-3, where ATen's CPU kernels disagree on the branch
        x = n * 4
        x = torch.where(((x.abs() - 3).abs() < 0.1), x * 1.1, x)
    elif kind == "mostly":  # 3% exact zeros
        x = n * (torch.rand(shape, device=device) >= 0.03)
    else:
        x = n
    return x.to(dt)
'''.strip("\n")

SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int32": "i32", "int64": "i64", "bool": "bool"}
FLOATS = ("float32", "float16", "bfloat16")
FORCED = {"bool": "bool", "index": "int64", "perm": "int64"}

# Tolerance classes: (atol, rtol) per dtype and the reason, written into each spec above TOLERANCES.
_HALF = (1e-2, 1e-2)
_DEFAULTS = {"float32": (1e-4, 1e-4), "float16": _HALF, "bfloat16": _HALF}
TOLERANCE_CLASSES: dict[str, tuple[dict[str, tuple[float, float]], tuple[str, ...]]] = {
    "default": (_DEFAULTS, (
        "ATen evaluates fp16/bf16 in fp32 and rounds the result once (where it rounds an intermediate to the",
        "storage type, e.g. a truncating division's quotient, the kernel does the same), so before the final",
        "rounding both sides differ by a few fp32 ulps (operation order, fused multiply-adds), and after it by at",
        "most one ulp of the storage type (fp16 4.9e-4, bf16 3.9e-3 relative): inside the defaults. Integer and",
        "bool outputs are compared exactly.")),
    "transcendental": (_DEFAULTS, (
        "Special functions differ between libm (the CPU reference), GPU intrinsics and the kernel's own forms",
        "(range-reduced polynomials, Newton-refined erfinv, series near 0 for expm1/log1p). On these domains",
        "(away from poles, inside (-1, 1) where required) the fp32 kernel agrees with ATen to 7e-7 relative, or",
        "6e-6 absolute where a result cancels towards 0 (measured on 2e5 points on the CPU interpreter; GPU fast",
        "intrinsics are expected to add a few ulps): >10x inside 1e-4. fp16/bf16 add one storage ulp at most.")),
    "reduction": (_DEFAULTS, (
        "Both sides accumulate in fp32 (int64 for integer sums) but in different orders: for rows of up to",
        "4099 N(0,1) values that moves fp32 results by ~1e-6 relative, far inside 1e-4; half-precision outputs",
        "are rounded once from fp32 (one ulp at most). Integer, bool and index results are exact. Atomic",
        "scatters add in a run-dependent order: the same fp32 bound applies.")),
    "scan": ({"float32": (1e-3, 1e-4), "float16": _HALF, "bfloat16": _HALF}, (
        "Prefix sums/products are associated blockwise by the kernel and left to right by ATen. Over a",
        "4099-long row the fp32 prefix sum reaches |y| ~ 100 and ordering moves it by ~sqrt(k) ulps of the",
        "partial sums (up to ~1e-4 absolute): atol 1e-3 covers that, rtol 1e-4 still catches a wrong carry",
        "(an error of a whole element, O(1)). Indices (cummax/cummin) are compared exactly.")),
    "norm": (_DEFAULTS, (
        "Statistics (mean, variance, max, sum of exponentials) are fp32 on both sides, combined in different",
        "orders (~1e-6 relative on rows of up to 4099); outputs are O(1), so fp32 agrees far inside 1e-4 and",
        "fp16/bf16 within one ulp of the storage type (under 1e-2).")),
    "exact": ({"float32": (0.0, 0.0), "float16": (0.0, 0.0), "bfloat16": (0.0, 0.0)}, (
        "Data movement and conversions only (copies, gathers, casts with round-to-nearest-even): the kernel",
        "must reproduce ATen bit for bit, so every dtype is compared exactly.")),
}


def shape_name(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape) if shape else "scalar"


def recipe(domain: str, shape: tuple[int, ...], dtype: str) -> Recipe:
    """The recipe of one argument: domains that fix their dtype (bool masks, int64 indices) override it."""
    return (domain, tuple(shape), FORCED.get(domain.partition(":")[0], dtype))


def elementwise_cases(op: AtenOp) -> tuple[Cases, Cases]:
    """(production, test) cases of an elementwise op: every argument full-shape unless a row-broadcast case."""
    if op.opt("cases"):
        return op.opt("prod_cases"), op.opt("cases")

    def make(shape, dtype, row=False, dtypes=None, tag=""):
        args, values = [], iter(dtypes or ())
        for i, arg in enumerate(op.args):
            dt = dtype
            if dtypes and arg.domain.partition(":")[0] not in FORCED:
                dt = next(values)
            arg_shape = shape[-1:] if (row and i > 0) else shape
            args.append(recipe(arg.domain, arg_shape, dt))
        names = "+".join(SHORT[d] for d in dtypes) if dtypes else SHORT[dtype]
        return f"{shape_name(shape)}{tag}_{names}", tuple(args)

    dts = op.dtypes
    test = dict(make(s, dts[i % len(dts)]) for i, s in enumerate([(1000,), (7, 33), (3, 5, 67), (4099,)]))
    test.update(make((257,), d) for d in dts[4:])
    if op.opt("empty", True):
        test.update([make((0, 16), dts[0], tag="_empty")])
    if op.opt("bcast"):
        test.update([make((7, 33), dts[0], row=True, tag="_row")])
    test.update(make((7, 33), dts[0], dtypes=combo, tag="_mixed") for combo in op.opt("mixed", ()))
    prod = dict([make((4096, 4096), dts[0])])
    half = next((d for d in ("bfloat16", "float16") if d in dts and d != dts[0]), None)
    if half:
        prod.update([make((4096, 4096), half)])
    return prod, test


def row_cases(op: AtenOp) -> tuple[Cases, Cases]:
    """(production, test) cases of a last-dim reduction or scan of one input (or a full reduction)."""
    domain = op.args[0].domain
    dts = op.dtypes

    def make(shape, dtype, tag=""):
        return f"{shape_name(shape)}{tag}_{SHORT[dtype]}", (recipe(domain, shape, dtype),)

    if op.opt("full"):
        shapes = [(1000,), (7, 33), (3, 5, 67), (4099,), (9000,)]
        prod_shapes = [(4096, 4096), (16777216,)]
    elif op.opt("small"):  # shorter rows: the simulator interprets every element of a generic scan
        shapes = [(7, 33), (3, 200), (2, 3, 67), (2, 1025), (300,), (5, 1)]
        prod_shapes = [(16384, 1024), (32768, 512)]
    else:
        shapes = [(7, 33), (5, 1000), (2, 3, 67), (3, 4099), (1000,), (5, 1)]
        prod_shapes = [(4096, 4096), (8192, 1024)]
    test = dict(make(s, dts[i % len(dts)]) for i, s in enumerate(shapes))
    test.update(make((3, 257), d) for d in dts[len(shapes):])
    if op.opt("empty_rows", True) and not op.opt("full"):
        test.update([make((0, 16), dts[0], "_empty")])
    if op.opt("empty_reduce"):
        test.update([make((0,) if op.opt("full") else (5, 0), dts[0], "_emptydim")])
    half = next((d for d in ("bfloat16", "float16") if d in dts and d != dts[0]), dts[-1])
    prod = dict([make(prod_shapes[0], dts[0]), make(prod_shapes[1], half)])
    return prod, test


def cases_for(op: AtenOp) -> tuple[Cases, Cases]:
    if op.family == "elementwise":
        return elementwise_cases(op)
    if op.family in ("reduction", "scan"):
        return row_cases(op)
    return op.opt("prod_cases"), op.opt("cases")  # norm, gather, layout: explicit in the table
