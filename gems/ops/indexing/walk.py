"""The gather and scatter kernels that every dim-indexed operator runs, and their launchers.

    gather:   out[e] = src[base_src(e) + sum_k i_k[e] * step_k]
    scatter:  dest[base_dest(e) + sum_k i_k[e] * step_k] (store | += | max | min | *=) src[e] or a value

e walks the iteration space (shared.plan_walk: up to four merged dims; rows are the first three
flattened, columns the last). One launch, one program per tile of BLOCK_R rows x BLOCK_C columns, all
offsets in int64. The base offsets of a row are computed once per row, so a tile is BLOCK_R runs of
BLOCK_C consecutive columns: where the innermost dim is contiguous (embedding rows, index_select of
dim 0, index.Tensor on leading dims) every run is one coalesced, vector-width copy; an index tensor
constant along the columns (IDX_ROWS) is read once per row, not per element. An index that varies along the
columns makes the accesses through it scattered; the tile's other reads then go one element a thread in the
same layout (_lane_cols), coalesced across a warp, with no layout conversion between them.

Up to four index tensors sharing one set of strides (index.Tensor's broadcast indices; one for the
others) each address a dim of size ``lim`` and stride ``step``; WRAP lets -lim <= i < 0 count from the
end. An index out of range is asserted on the device and masked (shared.py's docstring).

Accumulating scatters use atomics, as ATen's CUDA kernels do (index_add, scatter_add, scatter_reduce):
the order in which equal indices add is not fixed, so float results may differ in their last bits from
one call to the next. Where the destination dtype has no atomics (fp16, bf16, 8/16-bit integers, bool)
or a reduction needs counts, values accumulate into a scratch tensor of the accumulation dtype (fp32
for fp16/bf16, int64 for integers) and one pointwise pass combines it with self, rounding once.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion, float64_bits
from gems.ops.creation.fill import fill_dense
from gems.ops.indexing.shared import plan_walk
from gems.ops.pointwise.shared import div_rn
from gems.runtime.launch import Launcher

STORE, ADD, MAX, MIN, MUL = range(5)
MAX_INDICES = 4  # index tensors one launch takes (index.Tensor with more falls back)
# Destination dtypes with atomic add, max, min and compare-and-swap on every target.
NATIVE_ATOMICS = (torch.float32, torch.float64, torch.int32, torch.int64)

# --------------------------------------------------------------------------- kernels


@triton.jit
def _coords(pid, col_blocks, n_rows, n_cols, size1, size2, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """This program's row coordinates (c0, c1, c2), its columns, and the row and column masks."""
    rows = (pid // col_blocks) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = (pid % col_blocks) * BLOCK_C + tl.arange(0, BLOCK_C)
    rest = rows // size2
    return rest // size1, rest % size1, rows % size2, cols, rows < n_rows, cols < n_cols


@triton.jit
def _lane_cols(cols, n_cols, IDX_ROWS: tl.constexpr):
    """The columns that address what is read beside a per-element index (IDX_ROWS false): cols clamped to
    n_cols - 1, which moves no unmasked lane but hides their contiguity from Triton's axis analysis, so those
    loads take the one-element-a-thread layout of the scattered access. Otherwise Triton loads the index and a
    contiguous src in 16-byte vectors, gives the scattered store (or gather load) one element a thread, and
    converts pointers, values and masks between the layouts through shared memory. sm_90 builds (triton 3.6,
    4096 x 4096 along either dim): scatter went from 3 conversions, 16 KB of shared memory and 6-8 barriers a
    2048-element tile to none; gather by columns keeps one conversion (of the values, 2-4 KB), for its
    vector stores. The loads stay coalesced: a warp's 32 lanes read 32 consecutive elements, as in ATen's
    scatter/gather kernels. Triton 3.9 builds alike (16 KB and 3 conversions before, no shared memory after).
    Timed on an H200 (2026-11-27, ATen / gems, 16384 x 4096): scatter along dim -1 0.96x (bf16) and 1.15x
    (fp32), along dim 0 1.01x; last measured before this change at 0.90-0.92x (another H200)."""
    if IDX_ROWS:
        lanes = cols
    else:
        lanes = tl.minimum(cols, n_cols - 1)
    return lanes


@triton.jit
def _offsets(c0, c1, c2, cols, s0, s1, s2, s3):
    return (c0 * s0 + c1 * s1 + c2 * s2)[:, None] + cols[None, :] * s3


@triton.jit
def _index(i_ptr, c0, c1, c2, cols, si0, si1, si2, si3, row_mask, mask, lim, step,
           WRAP: tl.constexpr, IDX_ROWS: tl.constexpr):
    """(i * step, 0 <= i < lim) for one index tensor: [BLOCK_R, 1] when it is constant along the columns."""
    row_off = c0 * si0 + c1 * si1 + c2 * si2
    if IDX_ROWS:
        i = tl.load(i_ptr + row_off, mask=row_mask, other=0).to(tl.int64)[:, None]
    else:
        i = tl.load(i_ptr + row_off[:, None] + cols[None, :] * si3, mask=mask, other=0).to(tl.int64)
    if WRAP:
        i = tl.where(i < 0, i + lim, i)
    return i * step, (i >= 0) & (i < lim)


@triton.jit
def _indexed(i0_ptr, i1_ptr, i2_ptr, i3_ptr, c0, c1, c2, cols, si0, si1, si2, si3, row_mask, mask,
             lim0, step0, lim1, step1, lim2, step2, lim3, step3,
             N_IDX: tl.constexpr, WRAP: tl.constexpr, IDX_ROWS: tl.constexpr):
    """(offset the indices add, where every index is in range); asserts the range on the device."""
    off, ok = _index(i0_ptr, c0, c1, c2, cols, si0, si1, si2, si3, row_mask, mask, lim0, step0, WRAP, IDX_ROWS)
    if N_IDX > 1:
        more, good = _index(i1_ptr, c0, c1, c2, cols, si0, si1, si2, si3, row_mask, mask, lim1, step1, WRAP,
                            IDX_ROWS)
        off, ok = off + more, ok & good
    if N_IDX > 2:
        more, good = _index(i2_ptr, c0, c1, c2, cols, si0, si1, si2, si3, row_mask, mask, lim2, step2, WRAP,
                            IDX_ROWS)
        off, ok = off + more, ok & good
    if N_IDX > 3:
        more, good = _index(i3_ptr, c0, c1, c2, cols, si0, si1, si2, si3, row_mask, mask, lim3, step3, WRAP,
                            IDX_ROWS)
        off, ok = off + more, ok & good
    tl.device_assert(ok | (mask == 0), "index out of bounds")
    return off, ok & mask


@triton.jit(debug=True)
def _gather_kernel(
    src_ptr, out_ptr, i0_ptr, i1_ptr, i2_ptr, i3_ptr,
    n_rows, n_cols, col_blocks, size1, size2,
    ss0, ss1, ss2, ss3, so0, so1, so2, so3, si0, si1, si2, si3,
    lim0, step0, lim1, step1, lim2, step2, lim3, step3,
    N_IDX: tl.constexpr, WRAP: tl.constexpr, IDX_ROWS: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):
    """out[e] = src[e's src offset + the indices' offsets] for this program's tile (see the module docstring)."""
    pid = tl.program_id(0).to(tl.int64)
    c0, c1, c2, cols, row_mask, col_mask = _coords(pid, col_blocks, n_rows, n_cols, size1, size2, BLOCK_R, BLOCK_C)
    mask = row_mask[:, None] & col_mask[None, :]
    lanes = _lane_cols(cols, n_cols, IDX_ROWS)
    off, ok = _indexed(i0_ptr, i1_ptr, i2_ptr, i3_ptr, c0, c1, c2, lanes, si0, si1, si2, si3, row_mask, mask,
                       lim0, step0, lim1, step1, lim2, step2, lim3, step3, N_IDX, WRAP, IDX_ROWS)
    values = tl.load(src_ptr + _offsets(c0, c1, c2, lanes, ss0, ss1, ss2, ss3) + off, mask=ok, other=0)
    # out's columns unclamped: a contiguous out keeps 16-byte stores (one conversion, of the values alone).
    tl.store(out_ptr + _offsets(c0, c1, c2, cols, so0, so1, so2, so3), values, mask=mask)


@triton.jit
def _atomic_mul(dest_ptr, offs, v, where):
    """dest[offs] *= v where ``where``, by compare-and-swap on the value's bits (no atomic multiply exists).
    Lanes not written swap the first element with itself, which changes nothing."""
    if dest_ptr.dtype.element_ty.primitive_bitwidth == 64:
        bits_ty = tl.int64
    else:
        bits_ty = tl.int32
    ptrs = dest_ptr + tl.where(where, offs, 0)
    bit_ptrs = ptrs.to(tl.pointer_type(bits_ty), bitcast=True)
    cur = tl.load(ptrs)
    pending = where
    while tl.max(tl.max(pending.to(tl.int32), 1), 0) > 0:
        old = cur.to(bits_ty, bitcast=True)
        new = tl.where(pending, cur * v, cur).to(bits_ty, bitcast=True)
        seen = tl.atomic_cas(bit_ptrs, old, new)
        pending = pending & (seen != old)
        cur = seen.to(dest_ptr.dtype.element_ty, bitcast=True)


@triton.jit(debug=True)
def _scatter_kernel(
    dest_ptr, src_ptr, count_ptr, i0_ptr, i1_ptr, i2_ptr, i3_ptr, value,
    n_rows, n_cols, col_blocks, size1, size2,
    sd0, sd1, sd2, sd3, ss0, ss1, ss2, ss3, si0, si1, si2, si3,
    lim0, step0, lim1, step1, lim2, step2, lim3, step3,
    N_IDX: tl.constexpr, WRAP: tl.constexpr, IDX_ROWS: tl.constexpr, MODE: tl.constexpr, HAS_SRC: tl.constexpr,
    SCALE: tl.constexpr, COUNT: tl.constexpr, VALUE_BITS: tl.constexpr, BLOCK_R: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    """dest[e's dest offset + the indices' offsets] (MODE) src[e] (or ``value``); SCALE multiplies src by
    ``value`` first (index_add's alpha); COUNT adds 1 to count (laid out as dest) per element written."""
    pid = tl.program_id(0).to(tl.int64)
    c0, c1, c2, cols, row_mask, col_mask = _coords(pid, col_blocks, n_rows, n_cols, size1, size2, BLOCK_R, BLOCK_C)
    mask = row_mask[:, None] & col_mask[None, :]
    lanes = _lane_cols(cols, n_cols, IDX_ROWS)  # the stores are scattered: everything in their layout
    off, ok = _indexed(i0_ptr, i1_ptr, i2_ptr, i3_ptr, c0, c1, c2, lanes, si0, si1, si2, si3, row_mask, mask,
                       lim0, step0, lim1, step1, lim2, step2, lim3, step3, N_IDX, WRAP, IDX_ROWS)
    dest_offs = _offsets(c0, c1, c2, lanes, sd0, sd1, sd2, sd3) + off
    ty = dest_ptr.dtype.element_ty
    if VALUE_BITS:  # a float64 value travels as its bits (Triton passes Python floats as fp32)
        value = tl.cast(tl.cast(value, tl.int64), tl.float64, bitcast=True)
    if HAS_SRC:  # masked by the tile alone, not by the index (with IDX_ROWS, a contiguous src loads in vectors)
        v = tl.load(src_ptr + _offsets(c0, c1, c2, lanes, ss0, ss1, ss2, ss3), mask=mask, other=0).to(ty)
        if SCALE:
            v = v * value.to(ty)
    else:
        v = tl.full([BLOCK_R, BLOCK_C], value, ty)
    if MODE == 0:
        tl.store(dest_ptr + dest_offs, v, mask=ok)
    elif MODE == 1:
        tl.atomic_add(dest_ptr + dest_offs, v, mask=ok, sem="relaxed")
    elif MODE == 2:
        tl.atomic_max(dest_ptr + dest_offs, v, mask=ok, sem="relaxed")
    elif MODE == 3:
        tl.atomic_min(dest_ptr + dest_offs, v, mask=ok, sem="relaxed")
    else:
        _atomic_mul(dest_ptr, dest_offs, v, ok)
    if COUNT:
        tl.atomic_add(count_ptr + dest_offs, tl.full([BLOCK_R, BLOCK_C], 1, tl.int32), mask=ok, sem="relaxed")


_gather = Launcher(_gather_kernel)
_scatter = Launcher(_scatter_kernel)

# --------------------------------------------------------------------------- combining a scratch with self


@triton.jit
def _same(x):
    return x


@triton.jit
def _plus(x, acc):
    if x.dtype == tl.int1:
        result = (x.to(tl.int64) + acc) != 0  # bool adds as a logical or
    else:
        result = x + acc
    return result


@triton.jit
def _times(x, acc):
    return x * acc


@triton.jit
def _larger(x, acc):
    # Compared in the wider type: the scratch's identity (int64's extremes) has no value in self's dtype.
    return tl.where((x > acc) | (x != x), x, acc)  # NaN in self stays


@triton.jit
def _smaller(x, acc):
    return tl.where((x < acc) | (x != x), x, acc)


@triton.jit
def _divided(total, count):
    """total / count, floored for integers (ATen's div_(count, "floor")); count > 0."""
    if total.dtype.is_floating():
        result = div_rn(total, count.to(total.dtype))
    else:
        c = count.to(total.dtype)
        q = total // c
        result = q - ((total % c != 0) & (total < 0)).to(total.dtype)
    return result


@triton.jit
def _mean_with_self(x, acc, count):
    return _divided((x + acc).to(x.dtype), count + 1)


@triton.jit
def _reduced_or_self(x, acc, count):
    return tl.where(count > 0, acc.to(x.dtype), x)


@triton.jit
def _mean_or_self(x, acc, count):
    return tl.where(count > 0, _divided(acc.to(x.dtype), tl.maximum(count, 1)), x)


def _combine(name, body, operands):
    return PointwiseOp(name, body, operands=operands, promote_operands=(0,), promotion=Promotion.KEEP_FIRST)


copy_op = PointwiseOp("index_copy_self", _same, operands=1)
# (mode, include_self) -> the pass that writes self combined with the scratch (and its counts).
_COMBINE = {
    (ADD, True): _combine("index_add_scratch", _plus, 2),
    (MUL, True): _combine("index_mul_scratch", _times, 2),
    (MAX, True): _combine("index_max_scratch", _larger, 2),
    (MIN, True): _combine("index_min_scratch", _smaller, 2),
    ("mean", True): _combine("index_mean_scratch", _mean_with_self, 3),
    ("mean", False): _combine("index_mean_only_scratch", _mean_or_self, 3),
}
_REDUCED_OR_SELF = _combine("index_reduced_scratch", _reduced_or_self, 3)
_ACC_DTYPES = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float32,
               torch.float64: torch.float64}

# --------------------------------------------------------------------------- launchers


class Indices:
    """Up to MAX_INDICES index tensors over the iteration space, sharing ``strides`` (0 where broadcast);
    ``dims``: for each, (size, stride) of the dim it addresses in the indexed tensor; ``wrap``: negative
    values count from the end."""

    __slots__ = ("tensors", "strides", "dims", "wrap")

    def __init__(self, tensors, strides, dims, wrap=False):
        self.tensors, self.strides, self.dims, self.wrap = tuple(tensors), tuple(strides), tuple(dims), wrap

    def args(self) -> tuple:
        pad = MAX_INDICES - len(self.tensors)
        limits = [v for size_stride in (*self.dims, *((1, 0),) * pad) for v in size_stride]
        return (*self.tensors, *(self.tensors[0],) * pad), limits


def gather(src: torch.Tensor, src_strides, out: torch.Tensor, indices: Indices) -> torch.Tensor:
    """out (walked over its own shape and strides) = src gathered through ``indices``; ``src_strides``:
    src's strides over out's dims, 0 along the indexed ones."""
    if out.numel() == 0:
        return out
    walk = plan_walk(out.shape, src_strides, out.stride(), indices.strides)
    (ss, so, si), (tensors, limits) = walk.strides, indices.args()
    programs, col_blocks, block_r, block_c, warps = walk.tile(out.element_size(), si[3] != 0)
    _gather((programs,), src, out, *tensors, walk.n_rows, walk.n_cols, col_blocks, walk.size1, walk.size2,
            *ss, *so, *si, *limits, len(indices.tensors), indices.wrap, si[3] == 0, block_r, block_c,
            num_warps=warps)
    return out


def scatter(dest, dest_strides, indices: Indices, sizes, src, src_strides, mode=STORE, value=0, scale=False,
            count=None) -> None:
    """dest (mode)= src (or ``value``) over the iteration space ``sizes``; strides as in :func:`gather`.
    ``count``: a tensor laid out as dest, +1 per element written."""
    if 0 in sizes:
        return
    walk = plan_walk(sizes, dest_strides, src_strides if src is not None else (0,) * len(sizes), indices.strides)
    (sd, ss, si), (tensors, limits) = walk.strides, indices.args()
    programs, col_blocks, block_r, block_c, warps = walk.tile(dest.element_size(), si[3] != 0)
    bits = dest.dtype is torch.float64 and isinstance(value, float)
    value = float64_bits(value) if bits else (int(value) if isinstance(value, bool) else value)
    _scatter((programs,), dest, dest if src is None else src, dest if count is None else count, *tensors, value,
             walk.n_rows, walk.n_cols, col_blocks, walk.size1, walk.size2, *sd, *ss, *si, *limits,
             len(indices.tensors), indices.wrap, si[3] == 0, mode, src is not None, scale, count is not None, bits,
             block_r, block_c, num_warps=warps)


def _identity(mode, dtype):
    if mode in (ADD, "mean"):
        return -0.0 if dtype.is_floating_point else 0  # -0.0 + x is x for every x, -0.0 included
    if mode == MUL:
        return 1
    big = float("inf") if dtype.is_floating_point else torch.iinfo(dtype).max
    return -big if mode == MAX else big


def accumulate(self, out, sizes, src, src_strides, layout, mode, value=1, scale=False, include_self=True):
    """out = self with src (or ``value``) reduced into it by ``mode`` (ADD, MUL, MAX, MIN or "mean") at the
    indexed places, over the iteration space ``sizes``; out may be self (in place). ``layout(dest)``: (dest's
    strides over the iteration space, 0 along the indexed dims; the :class:`Indices` into dest). Reduces in
    out directly where its dtype has atomics and self takes part, else in a scratch of the accumulation
    dtype that one pass combines with self."""
    if include_self and mode != "mean" and out.dtype in NATIVE_ATOMICS:
        if out is not self:
            copy_op(self, out=out)
        scatter(out, *layout(out), sizes, src, src_strides, mode, value, scale)
        return out
    acc_dtype = _ACC_DTYPES.get(out.dtype, torch.int64)
    acc = fill_dense(torch.empty(out.shape, dtype=acc_dtype, device=out.device), _identity(mode, acc_dtype))
    count = None
    if mode == "mean" or not include_self:
        count = fill_dense(torch.empty(out.shape, dtype=torch.int32, device=out.device), 0)
    scatter(acc, *layout(acc), sizes, src, src_strides, ADD if mode == "mean" else mode, value, scale, count)
    if count is None:
        _COMBINE[mode, True](self, acc, out=out, inplace=out is self)
    elif mode == "mean":
        _COMBINE["mean", include_self](self, acc, count, out=out, inplace=out is self)
    else:
        _REDUCED_OR_SELF(self, acc, count, out=out, inplace=out is self)
    return out


def over(t: torch.Tensor, ndim: int, dim=None) -> list:
    """t's strides over an iteration space of ``ndim`` dims (0 where t has fewer: a 0-d t beside 1-d
    indices), 0 along ``dim``."""
    strides = [t.stride(d) if d < t.dim() else 0 for d in range(ndim)]
    if dim is not None and ndim:
        strides[dim] = 0
    return strides


def along(index: torch.Tensor, dim: int):
    """layout(t) of an index tensor of t's rank that addresses t's dim ``dim`` elementwise (gather,
    scatter): (t's strides over index's dims, 0 along dim; the Indices into t)."""
    ndim, index_strides = index.dim(), index.stride()

    def layout(t):
        size, step = (t.shape[dim], t.stride(dim)) if t.dim() else (1, 0)
        return over(t, ndim, dim), Indices((index,), index_strides, ((size, step),))

    return layout
