"""Mean and variance of few long rows, split across programs: per-chunk statistics merged by Chan's formula.

A variance (or a layer norm's statistics) over a few long rows in one program per row block reads each row
at one SM's bandwidth: 16 rows of a (C, H, W) layer norm keep 2 programs of a 132-SM GPU busy. Here SPLIT
programs share each row block, each over one CHUNK of the row: it computes its chunk's mean and M2 (sum of
squared deviations from the chunk's mean) in two passes over the chunk, as exact as the one-program form;
a combine kernel then merges the SPLIT (count, mean, M2) triples of each row (Chan et al.):
``mean = sum(n_i * mean_i) / N`` and ``M2 = sum(M2_i + n_i * (mean_i - mean)^2)``. A chunk's count is
``clamp(R - i * CHUNK, 0, CHUNK)``, so it is recomputed where needed rather than stored.

Partials live in one ``(2, SPLIT, n_rows)`` buffer: the chunk means, then the chunk M2s. Loop accumulators
are whole tiles reduced after the loop (see rows.py: Triton 3.6 asserts on ``acc = acc + tl.sum(...)``).
"""

from __future__ import annotations

from kernelevolve.lowering.context import Context

_COUNT = "tl.minimum(tl.maximum(R - {lo}, 0), CHUNK).to({acc})"


def chunk_stats_kernel(name: str, params: list[str], head: list[str], loop: list[str], acc: str,
                       what: str) -> str:
    """A kernel over grid (row blocks, SPLIT): each program stores its chunk's mean and M2 of rows ``o``.

    ``params`` must name ``part_ptr``, ``n_rows``, ``R`` and ``CHUNK``; ``head`` sets ``o``/``o_mask`` and
    the row offsets; ``loop`` (indented for the loop body, over ``r0``) sets ``m`` and ``v`` (0 where masked).
    """
    tile = f"[BLOCK_O, BLOCK_R], {acc}"
    body = ["    c = tl.program_id(1).to(tl.int64)", "    r_lo = c * CHUNK",
            f"    n = {_COUNT.format(lo='r_lo', acc=acc)}",
            f"    acc = tl.zeros({tile})", "    for r0 in range(r_lo, r_lo + CHUNK, BLOCK_R):", *loop,
            "        acc += v", "    mean = tl.sum(acc, axis=1) / tl.maximum(n, 1)",
            f"    acc = tl.zeros({tile})", "    for r0 in range(r_lo, r_lo + CHUNK, BLOCK_R):", *loop,
            "        d = tl.where(m, v - mean[:, None], 0.0)", "        acc += d * d",
            "    m2 = tl.sum(acc, axis=1)",
            "    tl.store(part_ptr + c * n_rows + o, mean, mask=o_mask)",
            "    tl.store(part_ptr + (tl.num_programs(1) + c) * n_rows + o, m2, mask=o_mask)"]
    return "\n".join(["@triton.jit", f"def {name}({', '.join(params)}):",
                      f"    # {what}: one chunk's mean and M2", *head, *body])


def combine_kernel(name: str, outs: list[str], extra: list[str], finish: list[str], acc: str, what: str) -> str:
    """One program per BLOCK_O rows merges their SPLIT chunk statistics into ``mean`` and ``m2`` (the row's
    sum of squared deviations), then runs ``finish`` (which stores into ``outs``, using ``extra`` params)."""
    params = ["part_ptr", *outs, "n_rows", "R", "CHUNK", *extra, "SPLIT: tl.constexpr", "BLOCK_O: tl.constexpr"]
    return "\n".join([
        "@triton.jit", f"def {name}({', '.join(params)}):",
        f"    # {what}: the SPLIT chunk statistics of each row merged (Chan's formula)",
        "    o = tl.program_id(0).to(tl.int64) * BLOCK_O + tl.arange(0, BLOCK_O)", "    o_mask = o < n_rows",
        "    s = tl.arange(0, SPLIT).to(tl.int64)",
        "    at = s[None, :] * n_rows + o[:, None]",
        "    mean_i = tl.load(part_ptr + at, mask=o_mask[:, None], other=0)",
        "    m2_i = tl.load(part_ptr + SPLIT * n_rows + at, mask=o_mask[:, None], other=0)",
        f"    n_i = {_COUNT.format(lo='s * CHUNK', acc=acc)}",
        "    mean = tl.sum(n_i[None, :] * mean_i, axis=1) / R",
        "    d = mean_i - mean[:, None]",
        "    m2 = tl.sum(m2_i + n_i[None, :] * d * d, axis=1)", *finish])


def partials(ctx: Context, split: str, n_rows: str, dtype: str = "torch.float32") -> str:
    """Allocates the ``(2, SPLIT, n_rows)`` partial buffer in the forward and returns its host name."""
    part = ctx.fresh("buf")
    ctx.line(f"{part} = torch.empty((2, {split}, {n_rows}), dtype={dtype}, device={ctx.device})")
    return part


def chunk(reduced: str, split: str, block_r: str) -> str:
    """Host expression of CHUNK: a multiple of BLOCK_R, SPLIT of them covering the row."""
    return f"triton.cdiv(triton.cdiv({reduced}, {split}), {block_r}) * {block_r}"
