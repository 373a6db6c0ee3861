"""Host helpers and the strided-copy kernel every lowered candidate may include (as source text)."""

from __future__ import annotations

HELPERS: dict[str, str] = {
    "_cast_out": '''
@triton.jit
def _cast_out(v, ptr):
    # the value converted to ptr's element type; bf16 rounded to nearest even first (ATen rounds, the CPU
    # interpreter's cast truncates)
    if ptr.dtype.element_ty == tl.bfloat16:
        v = _rtne_bf16(v)
    return v.to(ptr.dtype.element_ty)
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
def _copy_kernel(src_ptr, dst_ptr, n, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, u0, u1, u2, u3, u4, u5, base,
                 BLOCK: tl.constexpr):
    # dst <- src, each through its own strides (t, u) from element ``base`` of src (negative strides flip);
    # sizes padded to rank 6 with leading ones
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    rem = offs
    i5 = rem % s5
    rem = rem // s5
    i4 = rem % s4
    rem = rem // s4
    i3 = rem % s3
    rem = rem // s3
    i2 = rem % s2
    rem = rem // s2
    i1 = rem % s1
    i0 = rem // s1
    v = tl.load(src_ptr + base + i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5, mask=mask)
    dst = dst_ptr + i0 * u0 + i1 * u1 + i2 * u2 + i3 * u3 + i4 * u4 + i5 * u5
    tl.store(dst, v.to(dst_ptr.dtype.element_ty), mask=mask)
''',
    "_copy_into": '''
def _copy_into(dst, src, flip=()):
    """dst <- src (same shape; dtype converted) by a Triton kernel; dims in ``flip`` are read reversed."""
    if src.dim() > 6:  # the kernel takes rank 6: fold the rest away, or copy slice by slice
        return _copy_high_rank(dst, src, tuple(d % src.dim() for d in flip))
    pad = 6 - src.dim()
    sizes = [1] * pad + list(src.shape)
    strides = [0] * pad + list(src.stride())
    base = 0
    for d in flip:
        base += (src.shape[d] - 1) * src.stride(d)
        strides[pad + d] = -src.stride(d)
    _copy_kernel[(max(1, triton.cdiv(src.numel(), COPY_BLOCK)),)](src, dst, src.numel(), *sizes[1:], *strides,
                                                                  *([0] * pad + list(dst.stride())), base,
                                                                  BLOCK=COPY_BLOCK)
    return dst
''',
    "_copy_high_rank": '''
def _copy_high_rank(dst, src, flip):
    """_copy_into above rank 6 (einsum's broadcast intermediates reach 7 and more): size-1 dims dropped, then
    neighbours laid out alike in both tensors merged, else one copy per index of the first dim."""
    keep = [d for d in range(src.dim()) if src.shape[d] != 1]
    if len(keep) < src.dim():
        shape = [src.shape[d] for d in keep]
        _copy_into(dst.as_strided(shape, [dst.stride(d) for d in keep]),
                   src.as_strided(shape, [src.stride(d) for d in keep]), [keep.index(d) for d in flip if d in keep])
        return dst
    for d in range(src.dim() - 1):
        if d not in flip and d + 1 not in flip and all(
                t.stride(d) == t.stride(d + 1) * t.shape[d + 1] for t in (src, dst)):
            shape = list(src.shape[:d]) + [src.shape[d] * src.shape[d + 1]] + list(src.shape[d + 2:])
            def merged(t):
                return t.as_strided(shape, list(t.stride()[:d]) + list(t.stride()[d + 1:]))
            _copy_into(merged(dst), merged(src), [f if f < d else f - 1 for f in flip])
            return dst
    rest = [f - 1 for f in flip if f != 0]
    for i in range(src.shape[0]):
        _copy_into(dst[i], src[src.shape[0] - 1 - i if 0 in flip else i], rest)
    return dst
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
DEPS = {"_copy_into": ["_copy_kernel", "_copy_high_rank"], "_copy": ["_copy_into"], "_contiguous": ["_copy"],
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
