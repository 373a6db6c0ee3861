"""Device helpers (``@triton.jit`` sources) that lowered candidates include when their bodies use them.

Core Triton has exp, exp2, log, log2, sin, cos, sqrt, rsqrt, erf, floor, ceil and fma, but no libdevice
under the CPU interpreter, so the remaining functions are built from those with explicit accuracy
arguments. All compute in fp32. ``_rtne_bf16`` exists because Triton's CPU interpreter truncates
fp32 -> bf16 casts while GPUs (and ATen) round to nearest even: rounding the bits first makes the
final cast exact on both.
"""

from __future__ import annotations

import re

HELPERS: dict[str, str] = {}


def _helper(name: str, source: str) -> None:
    HELPERS[name] = source.strip("\n") + "\n"


_helper("_rtne_bf16", '''
@triton.jit
def _rtne_bf16(v):
    # fp32 -> nearest bf16 (ties to even), returned as fp32 whose low 16 bits are zero, so the final
    # .to(tl.bfloat16) is exact on any backend. NaN stays NaN; values past the bf16 range become inf.
    v = v.to(tl.float32)
    bits = v.to(tl.uint32, bitcast=True)
    bits = bits + 0x7FFF + ((bits >> 16) & 1)
    r = (bits & 0xFFFF0000).to(tl.float32, bitcast=True)
    return tl.where(v != v, v, r)
''')

_helper("_expm1", '''
@triton.jit
def _expm1(x):
    # |x| < 0.5: Taylor series to x^9 (truncation below 3e-10 relative), no cancellation;
    # elsewhere |expm1(x)| > 0.39, so exp(x) - 1 loses nothing.
    p = x * 2.755731922398589e-06 + 2.48015873015873e-05
    p = p * x + 1.984126984126984e-04
    p = p * x + 1.388888888888889e-03
    p = p * x + 8.333333333333333e-03
    p = p * x + 4.1666666666666664e-02
    p = p * x + 0.16666666666666666
    p = p * x + 0.5
    p = p * x + 1.0
    return tl.where(tl.abs(x) < 0.5, p * x, tl.exp(x) - 1.0)
''')

_helper("_log1p", '''
@triton.jit
def _log1p(x):
    # log1p(x) = 2 atanh(s), s = x / (2 + x). For -0.4 < x < 0.6, |s| <= 0.25 and the odd series to
    # s^13 is exact to 1e-9 relative; elsewhere 1 + x is far enough from 1 for log() to be accurate.
    s = x / (2.0 + x)
    s2 = s * s
    p = s2 * 0.07692307692307693 + 0.09090909090909091
    p = p * s2 + 0.1111111111111111
    p = p * s2 + 0.14285714285714285
    p = p * s2 + 0.2
    p = p * s2 + 0.3333333333333333
    p = p * s2 + 1.0
    small = (x > -0.4) & (x < 0.6)
    return tl.where(small, 2.0 * s * p, tl.log(1.0 + x))
''')

_helper("_tanh", '''
@triton.jit
def _tanh(x):
    # tanh|x| = -expm1(-2|x|) / (2 + expm1(-2|x|)): accurate near 0, saturates to 1 without inf/inf.
    e = _expm1(-2.0 * tl.abs(x))
    t = -e / (2.0 + e)
    return tl.where(x < 0, -t, t)
''')

_helper("_atan", '''
@triton.jit
def _atan(x):
    # Range reduction to |z| <= tan(pi/8) around 0, pi/4 or pi/2, then an odd degree-9 polynomial
    # (Cephes atanf coefficients); about 1e-7 relative over the whole line, inf -> +-pi/2.
    a = tl.abs(x)
    big = a > 2.414213562373095
    mid = a > 0.41421356237309503
    z = tl.where(big, -1.0 / a, tl.where(mid, (a - 1.0) / (a + 1.0), a))
    base = tl.where(big, 1.5707963267948966, tl.where(mid, 0.7853981633974483, 0.0))
    z2 = z * z
    p = ((8.05374449538e-2 * z2 - 1.38776856032e-1) * z2 + 1.99777106478e-1) * z2 - 3.33329491539e-1
    r = base + (p * z2 * z + z)
    return tl.where(x < 0, -r, r)
''')

_helper("_atan2", '''
@triton.jit
def _atan2(y, x):
    # atan(min/max) in [0, pi/4], then reflected into the right octant and quadrant; NaN in, NaN out.
    ax = tl.abs(x)
    ay = tl.abs(y)
    hi = tl.maximum(ax, ay)
    lo = tl.minimum(ax, ay)
    r = _atan(tl.where(hi == 0.0, 0.0, lo / tl.where(hi == 0.0, 1.0, hi)))
    r = tl.where(ay > ax, 1.5707963267948966 - r, r)
    r = tl.where(x < 0, 3.141592653589793 - r, r)
    r = tl.where(y < 0, -r, r)
    return tl.where((x != x) | (y != y), x + y, r)
''')

_helper("_asin", '''
@triton.jit
def _asin(x):
    # asin x = atan2(x, sqrt((1 - x)(1 + x))); the factored form keeps 1 - x^2 exact near |x| = 1.
    return _atan2(x, tl.sqrt((1.0 - x) * (1.0 + x)))
''')

_helper("_acos", '''
@triton.jit
def _acos(x):
    return _atan2(tl.sqrt((1.0 - x) * (1.0 + x)), x)
''')

_helper("_asinh", '''
@triton.jit
def _asinh(x):
    # asinh|x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); past 1e18, x^2 would overflow: log(2|x|).
    a = tl.abs(x)
    r = _log1p(a + a * a / (1.0 + tl.sqrt(1.0 + a * a)))
    r = tl.where(a > 1e18, tl.log(a) + 0.6931471805599453, r)
    return tl.where(x < 0, -r, r)
''')

_helper("_atanh", '''
@triton.jit
def _atanh(x):
    return 0.5 * _log1p(2.0 * x / (1.0 - x))
''')

_helper("_erfinv", '''
@triton.jit
def _erfinv(x):
    # Giles' single-precision polynomials in w = -log(1 - x^2) (2.5e-7 relative on the interpreter), one
    # Newton step on erf(y) = x against fast GPU logs; exact +-inf at +-1 and NaN outside [-1, 1], like
    # ATen. It replaced Winitzki's form with two Newton steps, 0.33x of eager on an H200: erf and exp twice.
    w = -tl.log((1.0 - x) * (1.0 + x))
    a = w - 2.5
    p = 2.81022636e-08
    p = 3.43273939e-07 + p * a
    p = -3.5233877e-06 + p * a
    p = -4.39150654e-06 + p * a
    p = 0.00021858087 + p * a
    p = -0.00125372503 + p * a
    p = -0.00417768164 + p * a
    p = 0.246640727 + p * a
    p = 1.50140941 + p * a
    b = tl.sqrt(w) - 3.0
    q = -0.000200214257
    q = 0.000100950558 + q * b
    q = 0.00134934322 + q * b
    q = -0.00367342844 + q * b
    q = 0.00573950773 + q * b
    q = -0.0076224613 + q * b
    q = 0.00943887047 + q * b
    q = 1.00167406 + q * b
    q = 2.83297682 + q * b
    y = tl.where(w < 5.0, p, q) * x
    y = y - (tl.erf(y) - x) / (1.1283791670955126 * tl.exp(-y * y))
    y = tl.where(tl.abs(x) == 1.0, x * float("inf"), y)
    return tl.where(tl.abs(x) > 1.0, float("nan"), y)
''')

_helper("_trunc", '''
@triton.jit
def _trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))
''')

_helper("_round_half_even", '''
@triton.jit
def _round_half_even(x):
    # floor, then the exact fraction x - floor(x) decides; a tie goes to the even neighbour
    # (ATen's nearbyint). Integral values (|x| >= 2^23 included) come back unchanged.
    f = tl.floor(x)
    d = x - f
    r = tl.where(d > 0.5, f + 1.0, f)
    odd = (f - 2.0 * tl.floor(0.5 * f)) != 0.0
    return tl.where((d == 0.5) & odd, f + 1.0, r)
''')

_helper("_floor_divide", '''
@triton.jit
def _floor_divide(a, b, IS_FP: tl.constexpr):
    if IS_FP:
        # ATen's div_floor_floating: the quotient of the exact remainder, floored, then nudged.
        mod = a % b
        div = tl.div_rn(a - mod, b)
        div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
        fl = tl.floor(div)
        fl = tl.where(div - fl > 0.5, fl + 1.0, fl)
        zero = tl.where((a / b) < 0, -0.0, 0.0)
        r = tl.where(div != 0, fl, zero)
        return tl.where(b == 0, a / b, r)
    else:
        q = a // b  # truncates toward zero, like C
        return tl.where(((a % b) != 0) & ((a < 0) != (b < 0)), q - 1, q)
''')

_helper("_div_trunc", '''
@triton.jit
def _div_trunc(a, b, IS_FP: tl.constexpr, OUT_FP16: tl.constexpr, OUT_BF16: tl.constexpr):
    if IS_FP:
        # IEEE division (not the approximate one) so an exact integral quotient is not truncated down;
        # ATen rounds a half-precision quotient to its storage type before truncating, so do we.
        q = tl.div_rn(a, b)
        if OUT_FP16:
            q = q.to(tl.float16).to(tl.float32)
        if OUT_BF16:
            q = _rtne_bf16(q)
        return _trunc(q)
    else:
        return a // b  # C division truncates toward zero
''')

_helper("_remainder", '''
@triton.jit
def _remainder(a, b):
    # Python-style modulo (sign of the divisor) from the C-style one, as ATen computes it.
    mod = a % b
    return tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
''')

_helper("_fmod", '''
@triton.jit
def _fmod(a, b, IS_FP: tl.constexpr):
    # C fmod (sign of the dividend), exact like ATen's ::fmod. Triton's float '%' is not exact on NVIDIA GPUs,
    # in fp32 nor (seen on an H200, rarely) in fp64: it expands to a - b * trunc(a / b) with a division that
    # may put the quotient one off. Here any quotient within one of the truth is corrected: in fp64 the
    # product trunc(q) * b and the difference are exact for fp32 operands with |a/b| < 2^24, so a remainder
    # with the wrong sign or one of at least |b| is off by exactly b and is fixed by adding or taking one b.
    if IS_FP:
        x = a.to(tl.float64)
        y = b.to(tl.float64)
        q = x / y
        q = tl.where(q < 0, -tl.floor(-q), tl.floor(q))
        r = x - q * y
        step = tl.where(x < 0, -tl.abs(y), tl.abs(y))
        r = tl.where((r != 0) & ((r < 0) != (x < 0)), r + step, r)
        r = tl.where(tl.abs(r) >= tl.abs(y), r - step, r)
        r = tl.where(r == 0, x * 0.0, r)  # the zero keeps the dividend's sign
        r = tl.where((tl.abs(y) == float("inf")) & (tl.abs(x) < float("inf")), x, r)
        return r.to(tl.float32)
    else:
        return a % b
''')

_helper("_mul_combine", '''
@triton.jit
def _mul_combine(a, b):
    return a * b
''')

for _op, _cmp in (("cummax", ">="), ("cummin", "<=")):
    _helper(f"_{_op}_combine", f'''
@triton.jit
def _{_op}_combine(v1, i1, v2, i2):
    # torch.{_op}'s rule: the later element wins a tie, and a NaN wins and holds until a later NaN
    take = ((v2 {_cmp} v1) | (v2 != v2)) & ~((v1 != v1) & (v2 == v2))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)
''')

_helper("_logaddexp_combine", '''
@triton.jit
def _logaddexp_combine(a, b):
    # log(exp(a) + exp(b)) without overflow: equal arguments (both infinite included) add log 2 exactly,
    # -inf is the identity, and a NaN propagates through the difference
    m = tl.maximum(a, b)
    r = m + _log1p(tl.exp(-tl.abs(a - b)))
    return tl.where(a == b, a + 0.6931471805599453, r)
''')

_helper("_lgamma", '''
@triton.jit
def _lgamma(x):
    # log|Gamma(x)|: Lanczos (g = 7, 9 terms) for x >= 0.5, the reflection formula below it; poles are +inf
    x = x.to(tl.float32)
    neg = x < 0.5
    z = tl.where(neg, 1.0 - x, x) - 1.0
    a = 0.99999999999980993 + 676.5203681218851 / (z + 1.0) - 1259.1392167224028 / (z + 2.0)
    a += 771.32342877765313 / (z + 3.0) - 176.61502916214059 / (z + 4.0) + 12.507343278686905 / (z + 5.0)
    a += -0.13857109526572012 / (z + 6.0) + 9.9843695780195716e-6 / (z + 7.0) + 1.5056327351493116e-7 / (z + 8.0)
    t = z + 7.5
    lg = 0.9189385332046727 + (z + 0.5) * tl.log(t) - t + tl.log(a)
    s = tl.abs(tl.sin(3.141592653589793 * (x - tl.floor(x))))
    refl = 1.1447298858494002 - tl.log(s) - lg
    r = tl.where(neg, refl, lg)
    r = tl.where((x <= 0) & (x == tl.floor(x)), float("inf"), r)
    return tl.where(x == float("inf"), x, r)
''')

_CALL = re.compile(r"\b(_[a-z0-9_]+)\b")


_helper("_extreme_rows_nan", '''
@triton.jit
def _extreme_rows_nan(acc, MAX: tl.constexpr):
    # tl.max/tl.min skip NaN lanes, but ATen's max/amax/min/amin propagate NaN: a row holding one returns NaN
    if MAX:
        res = tl.max(acc, axis=1)
    else:
        res = tl.min(acc, axis=1)
    nan_sum = tl.sum(tl.where(acc != acc, acc, 0), axis=1)  # NaN exactly when the row holds one
    return tl.where(nan_sum != nan_sum, nan_sum, res)
''')


def helpers_for(code: str) -> str:
    """Sources of the helpers ``code`` calls, dependencies first, each once."""
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered or name not in HELPERS:
            return
        for dep in _CALL.findall(HELPERS[name]):
            if dep != name:
                visit(dep)
        ordered.append(name)

    for name in _CALL.findall(code):
        visit(name)
    return "\n\n".join(HELPERS[n] for n in ordered)
