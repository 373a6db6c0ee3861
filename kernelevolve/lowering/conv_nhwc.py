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
    """The K loop over (tap, BLOCK_K channels of the group). With FLAT_TAPS it is one loop over both, so
    Triton's software pipeline runs across taps (a tap's channels may be only one or two steps); without,
    taps are an outer loop and each tap's channel loop is pipelined on its own."""
    lines = ["    if FLAT_TAPS:",
             "        n_chunks = tl.cdiv(CIG, BLOCK_K)",
             "        for step in range(0, (KTOT // CIG) * n_chunks):",
             "            t = step // n_chunks",
             "            c0 = (step % n_chunks) * BLOCK_K",
             *_tap(sp, stride, padding, dilation, "            "),
             *_chunk(ctx, "            "),
             "    else:",
             "        for t in range(0, KTOT // CIG):",
             *_tap(sp, stride, padding, dilation, "            "),
             "            for c0 in range(0, CIG, BLOCK_K):",
             *_chunk(ctx, "                ")]
    return lines


def _tap(sp: range, stride: list[int], padding: list[int], dilation: list[int], indent: str) -> list[str]:
    """Lines giving tap ``t``'s input rows (``x_row``, ``valid``) and weight columns (``w_col``)."""
    lines = [f"{indent}trem = t"]
    for d in reversed(sp):
        lines += [f"{indent}kk{d} = trem % K{d}", f"{indent}trem = trem // K{d}"]
    lines += [f"{indent}valid = m_mask", f"{indent}x_row = nb * sxn + g * CIG * sxc", f"{indent}w_col = co * swo"]
    for d in sp:
        lines += [f"{indent}i{d} = o{d} * {stride[d]} - {padding[d]} + kk{d} * {dilation[d]}",
                  f"{indent}valid = valid & (i{d} >= 0) & (i{d} < I{d})",
                  f"{indent}x_row += i{d} * sx{d}", f"{indent}w_col += kk{d} * sw{d}"]
    return lines


def _chunk(ctx: Context, indent: str) -> list[str]:
    """``acc += x[rows, c0:c0+BLOCK_K] @ w[c0:c0+BLOCK_K, cols]`` for the current tap."""
    return [f"{indent}ci = c0 + tl.arange(0, BLOCK_K)",
            f"{indent}k_mask = ci < CIG",
            f"{indent}a = tl.load(x_ptr + x_row[:, None] + ci[None, :] * sxc, "
            "mask=valid[:, None] & k_mask[None, :], other=0.0)",
            f"{indent}b = tl.load(w_ptr + w_col[None, :] + ci[:, None] * swi, "
            "mask=k_mask[:, None] & n_mask[None, :], other=0.0)",
            f"{indent}if F32_DOT:  # bf16 operands: dot in fp32 (Triton's CPU interpreter has no bf16 matmul)",
            f"{indent}    a = a.to(tl.float32)",
            *dots.lines(ctx, "acc", indent)]


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
