"""Host helpers and the strided-copy kernel every lowered candidate may include (as source text)."""

from __future__ import annotations

HELPERS: dict[str, str] = {
    "_cast_out": '''
@triton.jit
def _cast_out(v, ptr):
    # the value converted to ptr's element type; bf16 rounded to nearest even first (ATen rounds, the CPU
    # interpreter's cast truncates); a value already of that type (a copy's) passes through untouched
    if v.dtype != ptr.dtype.element_ty:
        if ptr.dtype.element_ty == tl.bfloat16:
            v = _rtne_bf16(v)
        v = v.to(ptr.dtype.element_ty)
    return v
''',
    "_flat": '''
def _flat(view, out):
    """A view read at the output's flat offsets: contiguous and of the output's shape."""
    return view.is_contiguous() and tuple(view.shape) == tuple(out.shape)
''',
    "_pid": '''
@triton.jit
def _pid(axis: tl.constexpr, I64: tl.constexpr):
    # the program id in int64 where offsets can pass 2**31, else int32: the index math that follows (a
    # flat offset split into dims by // and %) costs several times more in 64 bits on a GPU
    pid = tl.program_id(axis)
    if I64:
        pid = pid.to(tl.int64)
    return pid
''',
    "_i64": '''
def _i64(*tensors):
    """Whether a kernel over these tensors needs 64-bit offsets: an element count or a largest offset
    within 2**24 of 2**31 (the headroom covers a last block running past the end)."""
    limit = 2**31 - 2**24
    for t in tensors:
        span = sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride()) if size > 0)
        if t.numel() >= limit or span >= limit:
            return True
    return False
''',
    "_copy_kernel": '''
@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, z0, z1, z2, z3, z4, a0, a1, a2, a3, a4, b0, b1, b2, b3, b4, a_out, b_out,
                 base, RANK: tl.constexpr, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    # dst <- src, each through its own strides from element ``base`` of src (negative strides flip), over RANK
    # dims: the inner ones (sizes z, strides a and b) innermost first, then the outermost (a_out, b_out). RANK
    # is a constexpr, so a flat copy splits nothing; offsets are int32 unless the launch says IDX64.
    offs = _pid(0, IDX64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    rem = offs
    src_off = base
    dst_off = 0
    if RANK > 1:
        i = rem % z0
        rem = rem // z0
        src_off += i * a0
        dst_off += i * b0
    if RANK > 2:
        i = rem % z1
        rem = rem // z1
        src_off += i * a1
        dst_off += i * b1
    if RANK > 3:
        i = rem % z2
        rem = rem // z2
        src_off += i * a2
        dst_off += i * b2
    if RANK > 4:
        i = rem % z3
        rem = rem // z3
        src_off += i * a3
        dst_off += i * b3
    if RANK > 5:
        i = rem % z4
        rem = rem // z4
        src_off += i * a4
        dst_off += i * b4
    v = tl.load(src_ptr + src_off + rem * a_out, mask=mask)
    tl.store(dst_ptr + dst_off + rem * b_out, v.to(dst_ptr.dtype.element_ty), mask=mask)
''',
    "_copy_into": '''
def _copy_into(dst, src, flip=()):
    """dst <- src (same shape; dtype converted) by one Triton kernel; dims in ``flip`` are read reversed. The
    layouts are folded first (``_copy_dims``), so a contiguous copy is one flat run and the index math splits
    only the dims the two layouts need; past six such dims, one copy per index of the outermost."""
    flip = tuple(f % src.dim() for f in flip)
    shape, a, b, base = _copy_dims(dst, src, flip)
    if len(shape) > 6:
        d = next(d for d in range(src.dim()) if src.shape[d] != 1)
        rest = [f - (f > d) for f in flip if f != d]
        for i in range(src.shape[d]):
            _copy_into(dst.select(d, i), src.select(d, src.shape[d] - 1 - i if d in flip else i), rest)
        return dst
    inner = [(shape[d], a[d], b[d]) for d in reversed(range(1, len(shape)))] + [(1, 0, 0)] * (6 - len(shape))
    _copy_kernel[(max(1, triton.cdiv(src.numel(), COPY_BLOCK)),)](
        src, dst, src.numel(), *(t[0] for t in inner), *(t[1] for t in inner), *(t[2] for t in inner), a[0], b[0],
        base, RANK=len(shape), IDX64=_i64(src, dst), BLOCK=COPY_BLOCK)
    return dst
''',
    "_copy_dims": '''
def _copy_dims(dst, src, flip):
    """(sizes, src strides, dst strides, src offset of the first element read), outermost first: size-1 dims
    dropped, a flipped dim read through its negated stride from its last element, and a dim merged into its
    outer neighbour where both tensors step over the pair as over one dim."""
    base, dims = 0, []
    for d in range(src.dim()):
        size, s, t = src.shape[d], src.stride(d), dst.stride(d)
        if size == 1:
            continue
        if d in flip:
            base += (size - 1) * s
            s = -s
        if dims and dims[-1][1] == s * size and dims[-1][2] == t * size:
            dims[-1] = (dims[-1][0] * size, s, t)
        else:
            dims.append((size, s, t))
    dims = dims or [(1, 0, 0)]
    return [d[0] for d in dims], [d[1] for d in dims], [d[2] for d in dims], base
''',
    "_cat_into": '''
def _cat_into(kernel, out, dim, srcs, block, wide):
    """out <- cat(srcs, dim) by one launch of ``kernel`` (misc.py's ``_cat_kernel``), each source read as
    [outer, its size along dim, inner]; where a source's layout cannot be read so (a permuted view), each is
    copied into its slice instead. ``wide``: None to choose 64-bit offsets by size, else whether to use them."""
    strides = [(_run_stride(s, range(dim)), s.stride(dim), _run_stride(s, range(dim + 1, s.dim()))) for s in srcs]
    if any(None in st for st in strides):
        at = 0
        for s in srcs:
            _copy_into(out.narrow(dim, at, s.shape[dim]), s)
            at += s.shape[dim]
        return out
    ends, at = [], 0
    for s in srcs:
        at += s.shape[dim]
        ends.append(at)
    inner = 1
    for size in out.shape[dim + 1:]:
        inner *= size
    kernel[(max(1, triton.cdiv(out.numel(), block)),)](
        out, *srcs, out.numel(), out.shape[dim], max(1, inner), *(x for st in strides for x in st), *ends,
        IDX64=_i64(out, *srcs) if wide is None else wide, BLOCK=block)
    return out
''',
    "_run_stride": '''
def _run_stride(t, dims):
    """The stride that steps through ``dims`` of ``t`` as through one dim (their index flattened), or None where
    their layout needs more than one (a permuted or sliced view)."""
    stride, span = 0, None
    for d in reversed(dims):
        if t.shape[d] == 1:
            continue
        if span is None:
            stride = t.stride(d)
        elif t.stride(d) != span:
            return None
        span = t.stride(d) * t.shape[d]
    return stride
''',
    "_copy": '''
def _copy(src):
    """A contiguous copy of ``src`` made by a Triton kernel (views become buffers, outputs stop aliasing)."""
    return _copy_into(torch.empty(src.shape, dtype=src.dtype, device=src.device), src)
''',
    "_k_major": '''
def _k_major(src, k_dim):
    """``src`` if its reduction dim ``k_dim`` is the contiguous one, else a Triton copy laid out so it is: a
    TF32 tensor-core dot reads both operands K-major, and runs a slow path on any other layout (a matmul's
    operands; a channels-last conv's input and weight, whose K dim is 1, the channels)."""
    k_dim = k_dim % src.dim()
    if src.stride(k_dim) == 1 or src.shape[k_dim] == 1:
        return src
    order = [d for d in range(src.dim()) if d != k_dim] + [k_dim]
    buf = torch.empty([src.shape[d] for d in order], dtype=src.dtype, device=src.device)
    return _copy_into(buf.permute(*sorted(range(src.dim()), key=order.__getitem__)), src)
''',
    "_contiguous": '''
def _contiguous(src):
    return src if src.is_contiguous() else _copy(src)
''',
    "_register": '''
def _register(module, name, shape, dtype, parameter):
    """Create the reference's parameter or buffer ``name`` (dotted) so its values are copied in by name."""
    *path, leaf = name.split(".")
    for part in path:
        if part not in dict(module.named_children()):
            module.add_module(part, nn.Module())
        module = module.get_submodule(part)
    tensor = torch.empty(shape, dtype=dtype)
    if parameter:
        module.register_parameter(leaf, nn.Parameter(tensor, requires_grad=False))
    else:
        module.register_buffer(leaf, tensor)
''',
    "_pinned_sizes": '''
def _pinned_sizes(checks):
    """The trace fixed these sizes (the reference pinned them, or they came from its constructor args):
    other sizes would run kernels shaped for the traced ones, out of bounds, so refuse them here."""
    for tensor, name, dims in checks:
        for dim, size in dims:
            if tensor.shape[dim] != size:
                raise ValueError(f"{name} has size {tensor.shape[dim]} at dim {dim}, but the lowering was traced "
                                 f"with it fixed at {size}: lower again for these sizes")
''',
}
DEPS = {"_copy_into": ["_copy_kernel", "_copy_dims", "_i64"], "_copy_kernel": ["_pid"],
        "_cat_into": ["_copy_into", "_i64", "_run_stride"], "_copy": ["_copy_into"], "_contiguous": ["_copy"],
        "_k_major": ["_copy_into"]}


def helpers_used(text: str) -> list[str]:
    import re

    wanted: list[str] = []

    def visit(name: str) -> None:
        if name in wanted:
            return
        for dep in DEPS.get(name, []):
            visit(dep)
        wanted.append(name)

    for name in HELPERS:
        if re.search(rf"\b{name}\(", text):
            visit(name)
    return wanted
