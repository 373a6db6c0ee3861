"""The channels-last form of the convolution template, for NVIDIA targets (not transposed convs).

The NCHW template gathers each [BLOCK_M, BLOCK_K] input tile over (channel, kernel offset) pairs: every
element has its own channel and offset, decomposed with integer division, and consecutive K elements sit a
whole plane apart in memory. Here the kernel walks the taps (kernel offsets) in an outer loop and the input
channels in an inner one, so a tile's row is BLOCK_K consecutive channels of one input position: with the
input and the weight copied channels-last (``_k_major(t, 1)``: channel stride 1) both loads are contiguous
and the weight tile is K-major, as the TF32 tensor-core dot wants. The kernel takes the same arguments as
the NCHW one and reads everything through strides, so it is correct for any layout; the copies are what make
it fast. A ``*_CHANNELS_LAST`` flag (1 where a group has at least 16 input channels and the kernel more than one
tap: a 1x1 conv's NCHW gather is already contiguous and needs no copies) lets the search switch
back to the NCHW gather, as TorchInductor's conv template keys its choice on the layout.
"""

from __future__ import annotations

from kernelevolve.lowering import dots
from kernelevolve.lowering.context import Context


def loop(ctx: Context, sp: range, stride: list[int], padding: list[int], dilation: list[int]) -> list[str]:
    """The K loop: taps outer (scalar kernel offsets), BLOCK_K channels of the group inner."""
    lines = ["    for t in range(0, KTOT // CIG):", "        trem = t"]
    for d in reversed(sp):
        lines += [f"        kk{d} = trem % K{d}", f"        trem = trem // K{d}"]
    lines += ["        valid = m_mask", "        x_row = nb * sxn + g * CIG * sxc", "        w_col = co * swo"]
    for d in sp:
        lines += [f"        i{d} = o{d} * {stride[d]} - {padding[d]} + kk{d} * {dilation[d]}",
                  f"        valid = valid & (i{d} >= 0) & (i{d} < I{d})",
                  f"        x_row += i{d} * sx{d}", f"        w_col += kk{d} * sw{d}"]
    lines += ["        for c0 in range(0, CIG, BLOCK_K):",
              "            ci = c0 + tl.arange(0, BLOCK_K)",
              "            k_mask = ci < CIG",
              "            a = tl.load(x_ptr + x_row[:, None] + ci[None, :] * sxc, "
              "mask=valid[:, None] & k_mask[None, :], other=0.0)",
              "            b = tl.load(w_ptr + w_col[None, :] + ci[:, None] * swi, "
              "mask=k_mask[:, None] & n_mask[None, :], other=0.0)",
              "            if F32_DOT:  # bf16 operands: dot in fp32 (Triton's CPU interpreter has no bf16 matmul)",
              "                a = a.to(tl.float32)",
              *dots.lines(ctx, "acc", "            ")]
    return lines


def launch_either(ctx: Context, flag: str, channels_last: tuple[str, list[str]], nchw: tuple[str, list[str]]) -> None:
    """``if FLAG:`` copy x and w channels-last and launch that kernel, ``else:`` the NCHW one."""
    x, w = nchw[1][0], nchw[1][1]
    branches = []
    for head, args in (channels_last, nchw):
        start = len(ctx.forward)
        ctx.launch(head, args)
        branches.append(ctx.forward[start:])
        del ctx.forward[start:]
    ctx.forward += [f"if {flag}:", f"    x_cl, w_cl = _k_major({x}, 1), _k_major({w}, 1)",
                    *(f"    {line}" for line in branches[0]), "else:", *(f"    {line}" for line in branches[1])]
