"""What the copies share: two Triton kernels that write ``dst[...] = src`` converted to dst's dtype, the planner
that picks one for a pair of layouts, ATen's checks of a copy, and the references to the family's sample and
perf generators (imported when conformance or perf first calls them).

Conversions follow ATen's ``static_cast_with_inter_type``: a value reaches fp16/bf16 through fp32 (c10::Half
and c10::BFloat16 are built from a float, so int64 and fp64 sources round twice there, as in ATen), a floating
value reaches uint8 through int64 (negative values wrap), bool is ``value != 0`` (NaN is True). A float that an
integer dtype cannot hold has no defined result in ATen either.

Layouts: the dimensions are ordered by the destination's strides and merged where both tensors are contiguous
across them. Equal dense layouts (contiguous, channels_last into channels_last) become one flat loop. Any other
pair is walked in tiles of two dimensions, the destination's innermost and, when the source has its unit stride
elsewhere (a transpose, NCHW <-> NHWC), that one: each side's loads or stores are then coalesced and Triton
stages the tile through shared memory between them. Up to four more dimensions are indexed per program, so no
division runs per element.
"""

import math

import torch
import triton
import triton.language as tl

from gems.checks import check_out
from gems.codegen.pointwise import SUPPORTED_DTYPES, float64_bits
from gems.codegen.pointwise_checks import is_dense
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import lazy, lazy_perf

INT32_LIMIT = 2**31 - 1  # past it, offsets are computed in int64
MAX_OUTER_DIMS = 4  # dimensions beside the tile's two, indexed per program (6 after merging: rarely more)
_LOW_PRECISION = (torch.float16, torch.bfloat16)
_OVERLAP_HINT = "Please clone() the tensor before performing the operation."


@triton.jit
def _converted(x, dst_ty: tl.constexpr, WIDEN: tl.constexpr, VIA_INT64: tl.constexpr, NEG: tl.constexpr):
    """x as dst_ty, by ATen's intermediate types (see the module docstring); NEG: then negated in dst_ty."""
    if WIDEN:
        x = x.to(tl.float32)
    if VIA_INT64:
        x = x.to(tl.int64)
    y = x.to(dst_ty)
    if NEG:
        if y.dtype == tl.float16 or y.dtype == tl.bfloat16:
            y = (y.to(tl.float32) * -1.0).to(dst_ty)  # exact; bf16 arithmetic is fp32 (and the interpreter has none)
        elif y.dtype.is_floating():
            y = y * -1.0  # not 0 - y, which makes +0.0 of -0.0
        else:
            y = 0 - y
    return y


@triton.jit
def _copy_flat_kernel(src_ptr, dst_ptr, n_elements, WIDEN: tl.constexpr, VIA_INT64: tl.constexpr, NEG: tl.constexpr,
                      INT64: tl.constexpr, BLOCK: tl.constexpr):
    """dst[i] = src[i] for i < n_elements: two tensors of one dense layout, walked in memory order."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(src_ptr + offs, mask=mask)
    tl.store(dst_ptr + offs, _converted(x, dst_ptr.dtype.element_ty, WIDEN, VIA_INT64, NEG), mask=mask)


@triton.jit
def tile_offsets(pid, tiles_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Row and column offsets of tile ``pid`` in a grid of row tiles by ``tiles_n`` column tiles, columns first
    (neighbouring programs write neighbouring memory of a row-major result)."""
    offs_m = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    return offs_m, offs_n


@triton.jit
def _outer_step(pid, size, stride_s, stride_d, src_base, dst_base):
    index = pid % size
    return pid // size, src_base + index * stride_s, dst_base + index * stride_d


@triton.jit(do_not_specialize=["size_m", "size_n", "tiles_m", "tiles_n", "size_o0", "size_o1", "size_o2", "size_o3",
                               "stride_so0", "stride_so1", "stride_so2", "stride_so3", "stride_do0", "stride_do1",
                               "stride_do2", "stride_do3"])
def _copy_tiled_kernel(src_ptr, dst_ptr, value, size_m, size_n, tiles_m, tiles_n,
                       stride_sm, stride_sn, stride_dm, stride_dn,
                       size_o0, size_o1, size_o2, size_o3,
                       stride_so0, stride_so1, stride_so2, stride_so3,
                       stride_do0, stride_do1, stride_do2, stride_do3,
                       WIDEN: tl.constexpr, VIA_INT64: tl.constexpr, NEG: tl.constexpr, FILL: tl.constexpr,
                       VALUE_BITS: tl.constexpr,
                       OUTER: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """One [BLOCK_M, BLOCK_N] tile of dst[o..., m, n] = src[o..., m, n] per program (FILL: = value, src unread;
    a float64 value arrives as its bits); tiles along n first, so that neighbouring programs write neighbouring
    memory. The OUTER dimensions are o3, o2, ... (o3 the innermost); the strides equal to 1 are specialized,
    which is what coalesces each side."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    tile_n = pid % tiles_n
    pid = pid // tiles_n
    tile_m = pid % tiles_m
    pid = pid // tiles_m
    src_base = pid * 0
    dst_base = pid * 0
    if OUTER > 0:
        pid, src_base, dst_base = _outer_step(pid, size_o3, stride_so3, stride_do3, src_base, dst_base)
    if OUTER > 1:
        pid, src_base, dst_base = _outer_step(pid, size_o2, stride_so2, stride_do2, src_base, dst_base)
    if OUTER > 2:
        pid, src_base, dst_base = _outer_step(pid, size_o1, stride_so1, stride_do1, src_base, dst_base)
    if OUTER > 3:
        pid, src_base, dst_base = _outer_step(pid, size_o0, stride_so0, stride_do0, src_base, dst_base)
    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m < size_m)[:, None] & (offs_n < size_n)[None, :]
    if FILL:
        if VALUE_BITS:
            value = tl.cast(tl.cast(value, tl.int64), tl.float64, bitcast=True)
        y = tl.full([BLOCK_M, BLOCK_N], value, dst_ptr.dtype.element_ty)
    else:
        x = tl.load(src_ptr + src_base + offs_m[:, None] * stride_sm + offs_n[None, :] * stride_sn, mask=mask)
        y = _converted(x, dst_ptr.dtype.element_ty, WIDEN, VIA_INT64, NEG)
    tl.store(dst_ptr + dst_base + offs_m[:, None] * stride_dm + offs_n[None, :] * stride_dn, y, mask=mask)


_copy_flat = Launcher(_copy_flat_kernel)
_copy_tiled = Launcher(_copy_tiled_kernel)
_vendor_rules = {}
_configs = {}  # the vendor's rules depend only on their arguments: memoized, off the per-call path
_conversions = {}


def _rules(key):
    rules = _vendor_rules.get(key)
    if rules is None:
        rules = _vendor_rules[key] = selection.current().heuristics(key)
    return rules


def flat_config(numel, itemsize) -> tuple[int, int]:
    """(BLOCK, num_warps) of the flat kernel from the vendor's heuristics, key "copy_flat"."""
    key = (numel, itemsize)
    config = _configs.get(key)
    if config is None:
        rules, args = _rules("copy_flat"), {"n_elements": numel, "itemsize": itemsize}
        config = _memo(key, (rules["BLOCK"](args), rules["num_warps"](args)))
    return config


def tile_config(size_m, size_n, itemsize, transposed) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps) of a tile from the vendor's heuristics, key "copy"."""
    key = (size_m, size_n, itemsize, transposed)
    config = _configs.get(key)
    if config is None:
        rules = _rules("copy")
        args = {"size_m": size_m, "size_n": size_n, "itemsize": itemsize, "transposed": transposed}
        config = _memo(key, (rules["BLOCK_M"](args), rules["BLOCK_N"](args), rules["num_warps"](args)))
    return config


def _memo(key, config):
    if len(_configs) > 4096:
        _configs.clear()
    _configs[key] = config
    return config


def conversion(src_dtype, dst_dtype) -> tuple[bool, bool]:
    """(WIDEN, VIA_INT64) of :func:`_converted` for a copy from src_dtype to dst_dtype."""
    flags = _conversions.get((src_dtype, dst_dtype))
    if flags is None:
        widen = src_dtype is not dst_dtype and (src_dtype in _LOW_PRECISION or dst_dtype in _LOW_PRECISION)
        via_int64 = dst_dtype is torch.uint8 and src_dtype.is_floating_point
        flags = _conversions[src_dtype, dst_dtype] = (widen, via_int64)
    return flags


# --------------------------------------------------------------------------- planning and launching


def launch_copy(dst: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """``dst[...] = src``, converted to dst's dtype; src broadcasts to dst's shape. The callers have checked
    devices, dtypes and overlaps (:func:`check_copy`)."""
    numel = dst.numel()
    if numel == 0:
        return dst
    flags = (*conversion(src.dtype, dst.dtype), _negation(dst, src))
    if src.shape == dst.shape and (src.is_contiguous() and dst.is_contiguous()
                                   or src.stride() == dst.stride() and is_dense(dst)):
        _launch_flat(dst, src, numel, flags)
        return dst
    sizes, dst_strides, src_strides = _merged_layout(dst, src)
    if len(sizes) <= 1 and dst_strides == src_strides == [1] * len(sizes):
        _launch_flat(dst, src, numel, flags)
    else:
        _launch_tiled(dst, src, sizes, dst_strides, src_strides, flags)
    return dst


def _negation(dst, src) -> bool:
    """Whether the values change sign on the way: one side has a negative bit (a lazy negation, _neg_view)."""
    negate = src.is_neg() != dst.is_neg()
    if negate and dst.dtype is torch.bool:
        raise Fallback("a negation into bool (ATen decides whether it refuses it)")
    return negate


def _launch_flat(dst, src, numel, flags):
    block, num_warps = flat_config(numel, max(src.element_size(), dst.element_size()))
    _copy_flat((cdiv(numel, block),), src, dst, numel, *flags, numel > INT32_LIMIT, block, num_warps=num_warps)


def _merged_layout(dst, src):
    """Sizes and strides (outermost first, by dst's strides) after dropping size-1 dimensions and merging the
    ones both tensors are contiguous across; src's broadcast dimensions have stride 0."""
    shape = dst.shape
    pad = len(shape) - src.dim()
    src_strides = [0] * pad + [0 if n == 1 else s for n, s in zip(src.shape, src.stride())]
    dst_strides = dst.stride()
    dims = sorted((d for d in range(len(shape)) if shape[d] != 1),
                  key=lambda d: (dst_strides[d], src_strides[d]), reverse=True)
    sizes, merged_dst, merged_src = [], [], []
    for d in dims:
        size, a, b = shape[d], dst_strides[d], src_strides[d]
        if sizes and merged_dst[-1] == a * size and merged_src[-1] == b * size:
            sizes[-1] *= size
            merged_dst[-1], merged_src[-1] = a, b
        else:
            sizes.append(size)
            merged_dst.append(a)
            merged_src.append(b)
    return sizes, merged_dst, merged_src


def _launch_tiled(dst, src, sizes, dst_strides, src_strides, flags=(False, False, False), fill=None):
    """flags: (WIDEN, VIA_INT64, NEG); fill: (value, as float64 bits) to write instead of reading src."""
    rank = len(sizes)
    n_dim = rank - 1
    src_units = [d for d in range(rank - 1) if src_strides[d] == 1]
    transposed = bool(src_units) and src_strides[n_dim] != 1
    m_dim = src_units[-1] if transposed else (rank - 2 if rank > 1 else None)
    outer = [d for d in range(rank) if d not in (m_dim, n_dim)]
    if len(outer) > MAX_OUTER_DIMS:
        raise Fallback(f"a copy of {rank} dimensions that do not merge (gems tiles at most {MAX_OUTER_DIMS + 2})")
    size_m, sm, dm = (1, 0, 0) if m_dim is None else (sizes[m_dim], src_strides[m_dim], dst_strides[m_dim])
    size_n = sizes[n_dim]
    pad = MAX_OUTER_DIMS - len(outer)  # outer dimensions of size 1 first: the kernel walks o3, o2... inward out
    outer_sizes = [1] * pad + [sizes[d] for d in outer]
    outer_src = [0] * pad + [src_strides[d] for d in outer]
    outer_dst = [0] * pad + [dst_strides[d] for d in outer]
    reach = max(sum((n - 1) * s for n, s in zip(sizes, strides)) for strides in (src_strides, dst_strides))
    block_m, block_n, num_warps = tile_config(size_m, size_n, max(src.element_size(), dst.element_size()),
                                               transposed)
    tiles_m, tiles_n = cdiv(size_m, block_m), cdiv(size_n, block_n)
    programs = tiles_m * tiles_n * math.prod(outer_sizes)
    use_int64 = reach > INT32_LIMIT or programs * block_m * block_n > INT32_LIMIT
    value, bits = fill or (0, False)
    _copy_tiled((programs,), src, dst, value, size_m, size_n, tiles_m, tiles_n, sm, src_strides[n_dim], dm,
                dst_strides[n_dim], *outer_sizes, *outer_src, *outer_dst, *flags, fill is not None, bits,
                len(outer), use_int64, block_m, block_n, num_warps=num_warps)


def fill_strided(dst: torch.Tensor, value) -> torch.Tensor:
    """Write ``value`` (converted by checked_scalar) into every element of a tensor of any layout. Expanded
    dimensions (stride 0) are written once: filling is idempotent, and ATen's fill_ allows them."""
    if dst.numel() == 0:
        return dst
    sizes, strides, _ = _merged_layout(dst, dst)
    kept = [(n, s) for n, s in zip(sizes, strides) if s != 0] or [(1, 1)]
    sizes, strides = [n for n, _ in kept], [s for _, s in kept]
    bits = dst.dtype is torch.float64 and type(value) is float
    value = float64_bits(value) if bits else int(value) if type(value) is bool else value
    _launch_tiled(dst, dst, sizes, strides, strides, fill=(value, bits))
    return dst


# --------------------------------------------------------------------------- ATen's checks


def check_dtypes(*tensors) -> None:
    for t in tensors:
        if t.dtype not in SUPPORTED_DTYPES:  # complex dtypes among them (the only ones with a conjugate bit)
            raise Fallback(f"dtype {t.dtype} not handled by gems copy kernels")


def check_copy(dst: torch.Tensor, src: torch.Tensor) -> None:
    """ATen's copy_ checks that come before any copy: the same device (else a transfer, left to the device's own
    copy) and dtypes gems handles."""
    if src.device != dst.device:  # unreached on the interpreter: one device
        raise Fallback(f"a copy from {src.device} to {dst.device} is a transfer: the device's own copy serves it")
    check_dtypes(dst, src)


def check_layouts(dst: torch.Tensor, src: torch.Tensor) -> None:
    """ATen's TensorIterator checks of a copy, in its order: src broadcasts to dst's shape, dst has no element
    twice, src overlaps dst only exactly. Raises ATen's error."""
    if src.shape != dst.shape:
        check_broadcast(dst.shape, src.shape)
    if not is_dense(dst) and any(s == 0 and n > 1 for s, n in zip(dst.stride(), dst.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           f"single memory location. {_OVERLAP_HINT}")
    if _partial_overlap(dst, src):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           f"refer to a single memory location. {_OVERLAP_HINT}")


def check_broadcast(shape, src_shape) -> None:
    """ATen's TensorIterator errors for a source that does not broadcast to ``shape`` (no resize)."""
    for i in range(1, min(len(shape), len(src_shape)) + 1):
        a, b = shape[-i], src_shape[-i]
        if a != b and b != 1 and a != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                               f"dimension {max(len(shape), len(src_shape)) - i}")
    broadcast = torch.broadcast_shapes(shape, src_shape)
    if broadcast != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}")


def _partial_overlap(a, b) -> bool:
    """ATen's get_overlap_status(a, b) == Partial: both dense, sharing bytes, not exactly the same elements."""
    a_begin, b_begin = a.data_ptr(), b.data_ptr()
    a_end, b_end = a_begin + a.nbytes, b_begin + b.nbytes  # the extent of a dense tensor
    if not (a_begin < b_end and b_begin < a_end) or not (is_dense(a) and is_dense(b)):
        return False  # apart (or empty), or a layout ATen does not judge
    if a_begin == b_begin and a_end == b_end:
        return a.stride() != b.stride()
    return True


def same_data(dst, src) -> bool:
    """ATen's early exit: src is a view of exactly dst's elements in dst's dtype, so nothing changes."""
    return (dst.data_ptr() == src.data_ptr() and dst.dtype == src.dtype and dst.shape == src.shape
            and dst.stride() == src.stride() and dst.is_neg() == src.is_neg())


def check_no_transfer(device, tensor_device) -> None:
    """A result asked for on another device than the input's is a transfer: left to the device's own copy."""
    if device is None:
        return
    target = torch.device(device)
    if target.type == tensor_device.type:
        index = target.index
        if index is None and tensor_device.index is not None:  # the current device of that type
            index = getattr(torch, target.type).current_device()
        if index == tensor_device.index:
            return
    raise Fallback(f"a copy from {tensor_device} to {target} is a transfer: the device's own copy serves it")


def copy_view(view: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of a view (what ATen's view-copy operators return: t_copy, alias_copy...)."""
    check_dtypes(view)
    return launch_copy(torch.empty(view.shape, dtype=view.dtype, device=view.device), view)


def copy_out(out: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """The out= form of a copy that keeps the dtype (clone.out, t_copy.out...): out of src's device and dtype,
    resized to src's shape when it differs; an out sharing memory with src is written from a temporary, as
    ATen's copy-then-copy does."""
    check_out(out, src)
    check_dtypes(src, out)
    if out.shape != src.shape:
        out.resize_(src.shape)
    if out.untyped_storage().data_ptr() == src.untyped_storage().data_ptr():
        src = launch_copy(torch.empty_like(src), src)
    return launch_copy(out, src)


def allocate_like(self, dtype, memory_format) -> torch.Tensor:
    """The result of a copy of ``self``: preserve (the default) keeps a dense layout and else infers one in
    the same order, as ATen's clone, _to_copy and empty_like do; other formats are asked of torch.empty."""
    if memory_format is None or memory_format is torch.preserve_format:
        return torch.empty_like(self, dtype=dtype)
    return torch.empty(self.shape, dtype=dtype, device=self.device, memory_format=memory_format)


# --------------------------------------------------------------------------- lazy generator references


def copy_samples(name, **options):
    """gems.testing.samples_copy.<name>(**options), made on first use."""
    return lazy("gems.testing.samples_copy", name, **options)


def copy_perf(name, shapes="copy", **options):
    """The PerfSpec of gems.testing.samples_copy.<name>(**options), made on first use."""
    return lazy_perf("gems.testing.samples_copy", name, shapes=shapes, **options)
