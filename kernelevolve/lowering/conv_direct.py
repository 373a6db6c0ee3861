"""The direct form of the convolution template, for NVIDIA targets: fp32 FMA outer products, no tensor cores.

Why: with few input channels per group (an image's 3 colours, a stem's 8) the implicit GEMM's reduction is
short (channels x taps) and the tensor-core forms pad each step's channel block to 16: the NCHW gather spends
its time on per-element index math over (channel, tap) pairs and the channels-last form wastes 50-80% of each
dot, so such convs ran at 0.13-0.5x of torch.compile. Here a program owns a BLOCK_M x BLOCK_N tile of
(output position, output channel), as in the GEMM forms (the same head, tail and fused epilogue), and for
every input channel walks the taps in ``tl.static_range`` loops (kernel sizes are compile-time constants):
each tap loads one input vector of BLOCK_M positions and one weight vector of BLOCK_N channels and adds their
outer product to the fp32 tile. Index math per tap is a few vector adds, validity per kernel dimension is
hoisted out of the inner taps (as in conv_depthwise.py), and the products are exact fp32 (no TF32 split).
A ``*_DIRECT`` flag (1 where a group has fewer than 16 input channels and the taps are few: ``preferred``)
lets the search switch between it and the tensor-core forms.
"""

from __future__ import annotations

from kernelevolve.lowering.context import Context
from kernelevolve.lowering.indexing import padded_load

FEW_CHANNELS = 16  # below this many input channels per group the direct form is the default...
MAX_TAPS_X_STRIDE = 64  # ...unless taps x the largest stride exceed this (wide, strided stems)


def preferred(cig: int, taps: int, stride: list[int]) -> bool:
    """Whether the direct form is the draft's default for a conv with ``cig`` input channels per group.

    Each tap is one strided vector load of BLOCK_M input positions: with many taps and a stride, those loads
    dominate and the implicit GEMM's gather wins. Measured first drafts (H100/H200, benchmarks/results/
    conv_direct_h100.md, direct_l3_ab_h200.md): 3x3 and 3x3x3 convs at stride 1 and a 4x4x4 one (64) are
    1.2-6.6x faster direct; a 3x5x7 kernel at stride 1 (105) 8-10% slower; AlexNet's 11x11 stem at stride 4
    (484) 10% slower; GoogleNet's 7x7 stem at stride 2 (98) took 7.2 ms direct against 0.2 ms as a GEMM.
    """
    return cig < FEW_CHANNELS and taps * max(stride, default=1) <= MAX_TAPS_X_STRIDE


def loop(sp: range, stride: list[int], padding: list[int], dilation: list[int]) -> list[str]:
    """The reduction of the direct kernel: channels in a loop, taps unrolled, one outer product per tap."""
    lines = [f"    b{d} = o{d} * {stride[d]} - {padding[d]}" for d in sp]
    lines += ["    xp0 = x_ptr + nb * sxn + g * CIG * sxc", "    wp0 = w_ptr + co * swo",
              "    for ci in range(0, CIG):",
              "        xpc = xp0 + ci * sxc", "        wpc = wp0 + ci * swi"]
    valid, xq, wq = "m_mask", "xpc", "wpc"
    for d in sp:
        ind = "    " * (d + 2)
        lines += [f"{ind}for k{d} in tl.static_range(K{d}):",
                  f"{ind}    i{d} = b{d} + k{d} * {dilation[d]}",
                  f"{ind}    ok{d} = {valid} & (i{d} >= 0) & (i{d} < I{d})",
                  f"{ind}    xq{d} = {xq} + i{d} * sx{d}",
                  f"{ind}    wq{d} = {wq} + k{d} * sw{d}"]
        valid, xq, wq = f"ok{d}", f"xq{d}", f"wq{d}"
    ind = "    " * (len(sp) + 2)
    return lines + [f"{ind}a = {padded_load(xq, 'xpc', valid, '0.0')}.to(tl.float32)",
                    f"{ind}b = tl.load({wq}, mask=n_mask, other=0.0).to(tl.float32)",
                    f"{ind}acc += a[:, None] * b[None, :]"]


def tiles(m: int, cog: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N): every output channel of the group up to 64 in one tile, and 8192 accumulators (64
    registers a thread at four warps), so each loaded input value feeds BLOCK_N FMAs."""
    bn = 16
    while bn < cog and bn < 64:
        bn *= 2
    bm = 8192 // bn
    while bm > 32 and bm // 2 >= m:
        bm //= 2
    return bm, bn


def launch_either(ctx: Context, flag: str, direct: tuple[str, list[str]], others: list[str]) -> None:
    """``if FLAG:`` launch the direct kernel, ``else:`` the forward lines ``others`` (the tensor-core forms),
    which were emitted last and are moved under the ``else``."""
    start = len(ctx.forward)
    ctx.launch(*direct)
    branch = ctx.forward[start:]
    del ctx.forward[start:]
    ctx.forward += [f"if {flag}:", *(f"    {line}" for line in branch), "else:", *(f"    {line}" for line in others)]
