"""The tl.dot of the matmul and conv templates, and their tile defaults on NVIDIA GPUs.

References run fp32 matmuls and convs in IEEE fp32 (evaluators/numerics.py turns TF32 off), and an
``input_precision="ieee"`` dot runs on CUDA cores: 67 TFLOP/s on an H100 against 495 for TF32 tensor cores.
On NVIDIA targets a draft's fp32 dot is Triton's ``"tf32x3"`` instead: each operand splits into a TF32
high part and a TF32 remainder, and hi*hi + hi*lo + lo*hi is accumulated in fp32. A product's relative
error is then ~2^-21 (the dropped lo*lo term and the remainder's rounding), below the fp32 accumulation
error of any reduction longer than a few hundred terms, so the kernel stays as exact as an IEEE one
(CUTLASS ships the same split as its fast accurate fp32 GEMM). The ``TF32X3`` tunable (a flag) lets the
search fall back to IEEE; the interpreter (cpu target) and other vendors keep the IEEE dot alone.
"""

from __future__ import annotations

from kernelevolve.lowering.context import Context

K_GROUP = 16  # BLOCK_K steps per partial sum of an fp32 matmul (matmul.py, matmul_forms.py)
SMS = 132  # an H100's SM count: tile defaults aim for at least two waves of programs
_IEEE = 'tl.dot(a, b.to(a.dtype), {acc}, input_precision="ieee")'
_X3 = 'tl.dot(a, b.to(a.dtype), {acc}, input_precision="tf32x3")'


def flag(ctx: Context, tag: str) -> str | None:
    """The ``{tag}_TF32X3`` tunable (1 on NVIDIA targets), or None where the target keeps IEEE dots."""
    if not ctx.nvidia:
        return None
    return ctx.tunable(f"{tag}_TF32X3", 1, "1: fp32 dot as three TF32 tensor-core products; 0: IEEE fp32")


def lines(ctx: Context, acc: str, indent: str) -> list[str]:
    """``acc += a @ b`` for the K loop of a template, IEEE or (NVIDIA) switched by the TF32X3 constexpr."""
    if not ctx.nvidia:
        return [f"{indent}{acc} = {_IEEE.format(acc=acc)}"]
    return [f"{indent}if TF32X3:  # hi*hi + hi*lo + lo*hi in TF32 on tensor cores: IEEE-level error",
            f"{indent}    {acc} = {_X3.format(acc=acc)}",
            f"{indent}else:",
            f"{indent}    {acc} = {_IEEE.format(acc=acc)}"]


def gpu_tiles(m: int, n: int, programs_per_tile: int) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, warps) for an NVIDIA draft: the largest power-of-two tiles up to 128 x 128 that
    still give two waves of programs (``programs_per_tile`` multiplies the tile count: batch, groups)."""
    def cover(size: int) -> int:
        p = 16
        while p < size and p < 128:
            p *= 2
        return p

    bm, bn = cover(m), cover(n)
    while (-(-m // bm)) * (-(-n // bn)) * programs_per_tile < 2 * SMS and max(bm, bn) > 32:
        if bm >= bn:
            bm //= 2
        else:
            bn //= 2
    return bm, bn, 8 if bm * bn >= 128 * 128 else 4
