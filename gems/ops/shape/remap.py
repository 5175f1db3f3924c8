"""The shape family's copy kernel: each output element is read from at most one source element, found
dimension by dimension, or takes a fill value where it has none.

An output dimension of size ``m`` reads a source dimension of size ``n`` through a mode:

    KEEP       i = o                              (a plain strided copy: repeat's and pixel_shuffle's
                                                   views, slice_scatter's copies)
    FLIP       i = n - 1 - o
    WRAP       i = (o - lo) mod n                 (roll: lo = shift; repeat: lo = 0, m = n * repeats)
    PAD        i = o - lo, none outside [0, n)    (constant padding; negative pads crop)
    REFLECT    i = |o - lo|, mirrored at n - 1    (reflection padding: pads < n, one reflection)
    REPLICATE  i = clamp(o - lo, 0, n - 1)        (replication padding)
    STEP       i = (o - lo) / step where it divides, none elsewhere (slice_backward)

The output is walked in 2-D tiles: columns are its last dimension (contiguous loads and stores where the
strides are 1), rows the others, decomposed per row rather than per element (divisions cost BLOCK_R, not
BLOCK_R x BLOCK_C). Dimensions are merged where the copy is contiguous across them in both tensors, so a
contiguous copy of any rank is one long row of columns. Up to MAX_RANK dimensions remain; the unused ones
are size 1, which Triton specializes, so their arithmetic folds away.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import float64_bits, pointwise_config
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback

KEEP, FLIP, WRAP, PAD, REFLECT, REPLICATE, STEP = range(7)  # the modes, as the host passes them
# The same, as kernels see them (a jit function reads only constexpr globals).
_KEEP, _FLIP, _WRAP, _PAD = tl.constexpr(KEEP), tl.constexpr(FLIP), tl.constexpr(WRAP), tl.constexpr(PAD)
_REFLECT, _REPLICATE = tl.constexpr(REFLECT), tl.constexpr(REPLICATE)
# Modes that give every output element a source element (no fill value needed).
_TOTAL_MODES = (KEEP, FLIP, WRAP, REFLECT, REPLICATE)
# Dimensions left after merging that one launch handles: pixel_shuffle of a strided batch needs six.
MAX_RANK = 6
INT32_LIMIT = 2**31 - 1  # past it, offsets are computed in int64


@triton.jit
def _source(o, n, lo, step, MODE: tl.constexpr):
    """(source index, whether there is one) for output coordinates ``o`` of a dim whose source has n."""
    i = o - lo
    valid = o >= 0  # all true
    if MODE == _KEEP:
        i = o
    elif MODE == _FLIP:
        i = n - 1 - o
    elif MODE == _WRAP:
        i = i % n
        i = tl.where(i < 0, i + n, i)
    elif MODE == _PAD:
        valid = (i >= 0) & (i < n)
    elif MODE == _REFLECT:
        i = tl.abs(i)
        i = tl.where(i >= n, 2 * n - 2 - i, i)
    elif MODE == _REPLICATE:
        i = tl.minimum(tl.maximum(i, 0), n - 1)
    else:  # STEP
        valid = (i >= 0) & (i < n * step) & (i % step == 0)
        i = i // step
    return i, valid


@triton.jit
def _row_dim(r, off_x, off_o, valid, m, n, stride_x, stride_o, lo, step, MODE: tl.constexpr):
    """Peel one dim (size m) off the row numbers r: (the rest, offsets and validity updated)."""
    o = r % m
    i, v = _source(o, n, lo, step, MODE)
    return r // m, off_x + i * stride_x, off_o + o * stride_o, valid & v


@triton.jit
def _remap_kernel(x_ptr, out_ptr, value, n_rows, tiles_c, step,
                  m0, n0, stride_x0, stride_o0, lo0, m1, n1, stride_x1, stride_o1, lo1,
                  m2, n2, stride_x2, stride_o2, lo2, m3, n3, stride_x3, stride_o3, lo3,
                  m4, n4, stride_x4, stride_o4, lo4, m5, n5, stride_x5, stride_o5, lo5,
                  MODE0: tl.constexpr, MODE1: tl.constexpr, MODE2: tl.constexpr, MODE3: tl.constexpr,
                  MODE4: tl.constexpr, MODE5: tl.constexpr, HAS_VALUE: tl.constexpr, VALUE_BITS: tl.constexpr,
                  INT64: tl.constexpr, VEC: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """out[o0..o5] = x[i0..i5] (or value where some dim has no source); dims 0-4 are the rows (row-major),
    dim 5 the columns. One program per (row tile, column tile). A float64 value arrives as its bits.
    VEC > 1 (FLIP columns, no value): groups of VEC columns (16 bytes) load forward, reverse in registers."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    rows = (pid // tiles_c) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = (pid % tiles_c) * BLOCK_C + tl.arange(0, BLOCK_C)
    i_c, valid_c = _source(cols, n5, lo5, step, MODE5)
    valid_r = rows < n_rows
    off_x = rows * 0
    off_o = rows * 0
    r, off_x, off_o, valid_r = _row_dim(rows, off_x, off_o, valid_r, m4, n4, stride_x4, stride_o4, lo4, step, MODE4)
    r, off_x, off_o, valid_r = _row_dim(r, off_x, off_o, valid_r, m3, n3, stride_x3, stride_o3, lo3, step, MODE3)
    r, off_x, off_o, valid_r = _row_dim(r, off_x, off_o, valid_r, m2, n2, stride_x2, stride_o2, lo2, step, MODE2)
    r, off_x, off_o, valid_r = _row_dim(r, off_x, off_o, valid_r, m1, n1, stride_x1, stride_o1, lo1, step, MODE1)
    r, off_x, off_o, valid_r = _row_dim(r, off_x, off_o, valid_r, m0, n0, stride_x0, stride_o0, lo0, step, MODE0)
    if VEC > 1:
        # Out columns first + g * VEC + j read x's columns n5 - first - (g + 1) * VEC + (VEC - 1 - j): each
        # group is VEC consecutive source columns, loaded forward (a vector where stride_x5 is 1) and reversed.
        first = (pid % tiles_c) * BLOCK_C
        g = tl.arange(0, BLOCK_C // VEC)[None, :, None]
        k = tl.arange(0, VEC)[None, None, :]
        src_c = n5 - first - (g + 1) * VEC + k
        in_rows = (rows < n_rows)[:, None, None]
        x = tl.load(x_ptr + off_x[:, None, None] + src_c * stride_x5, mask=in_rows & (src_c >= 0))
        out_c = first + g * VEC + k
        tl.store(out_ptr + off_o[:, None, None] + out_c * stride_o5, tl.flip(x, 2).to(out_ptr.dtype.element_ty),
                 mask=in_rows & (out_c < m5))
        return
    in_tile = (rows < n_rows)[:, None] & (cols < m5)[None, :]
    x_ptrs = x_ptr + off_x[:, None] + (i_c * stride_x5)[None, :]
    out_ptrs = out_ptr + off_o[:, None] + (cols * stride_o5)[None, :]
    if HAS_VALUE:
        take = in_tile & valid_r[:, None] & valid_c[None, :]
        x = tl.load(x_ptrs, mask=take, other=0).to(out_ptr.dtype.element_ty)
        if VALUE_BITS:
            v = tl.cast(tl.cast(value, tl.int64), tl.float64, bitcast=True)
        else:
            v = value
        x = tl.where(take, x, tl.full([BLOCK_R, BLOCK_C], v, out_ptr.dtype.element_ty))
    else:
        x = tl.load(x_ptrs, mask=in_tile).to(out_ptr.dtype.element_ty)
    tl.store(out_ptrs, x, mask=in_tile)


_remap = Launcher(_remap_kernel)
_UNIT = (1, 1, 0, 0, 0, KEEP)  # a size-1 KEEP dim: pads the rank up to MAX_RANK


def dims_of(x, out, modes=None):
    """Per output dim (size, source size, x stride, out stride, lo, mode) for x and out of the same rank:
    every dim KEEP unless ``modes`` (dim -> (mode, lo)) says otherwise."""
    dims = [(m, n, sx, so, 0, KEEP) for m, n, sx, so in zip(out.shape, x.shape, x.stride(), out.stride())]
    for d, (mode, lo) in (modes or {}).items():
        dims[d] = (*dims[d][:4], lo, mode)
    return dims


def _merged(dims):
    """Size-1 dims that read element 0 dropped, and neighbours merged where both are KEEP (or both FLIP)
    over whole sources and contiguous across each other in x and in out."""
    merged = []
    for dim in dims:
        m, n, sx, so, lo, mode = dim
        if m == 1 and mode in (KEEP, FLIP) and n == 1:
            continue
        if merged:
            pm, pn, psx, pso, plo, pmode = merged[-1]
            if (mode == pmode and mode in (KEEP, FLIP) and m == n and pm == pn and psx == sx * m and pso == so * m):
                merged[-1] = (pm * m, pn * n, sx, so, 0, mode)
                continue
        merged.append(dim)
    return merged


def remap(x: torch.Tensor, out: torch.Tensor, dims, value=None, step: int = 1) -> torch.Tensor:
    """Fill ``out`` from ``x`` through ``dims`` (see :func:`dims_of`); ``value``: what elements with no source
    get (PAD and STEP modes need one). ``value`` must already be converted to out's dtype (checked_scalar)."""
    numel = out.numel()
    if numel == 0:
        return out
    dims = _merged(dims)
    if len(dims) > MAX_RANK:
        raise Fallback(f"{len(dims)} dimensions after merging (the shape family's copy kernel walks {MAX_RANK})")
    dims = [_UNIT] * (MAX_RANK - len(dims)) + dims if dims else [_UNIT] * MAX_RANK
    has_value = not all(d[5] in _TOTAL_MODES for d in dims)
    bits = has_value and out.dtype is torch.float64 and type(value) is float
    if not has_value:
        value = 0
    elif bits:
        value = float64_bits(value)
    elif type(value) is bool:
        value = int(value)  # the interpreter cannot take a bool argument
    cols = dims[-1][0]
    n_rows = numel // cols
    # The offsets a program computes (masked lanes too: a padded position's source index runs past the source).
    reach = max(sum((max(d[0], d[1]) + abs(d[4])) * abs(d[2]) for d in dims), sum(d[0] * abs(d[3]) for d in dims))
    int64 = numel > INT32_LIMIT or reach > INT32_LIMIT
    block, num_warps = pointwise_config(numel, out.element_size())
    block_c = min(next_power_of_2(cols), block)
    block_r = min(max(1, block // block_c), next_power_of_2(n_rows))
    tiles_c = cdiv(cols, block_c)
    args = [a for d in dims for a in d[:5]]
    modes = [d[5] for d in dims]
    # Reversed columns: a reversed load has no provable contiguity (2-byte loads for bf16; 85% of the copy
    # bandwidth on an H200 at 8192 x 8192), so whole 16-byte groups load forward and reverse in registers
    # (sm_90: byte permutes, no shuffles). Only where the groups are whole and both sides contiguous: else a
    # group's lanes may sit in different threads, and reversing them costs warp shuffles.
    vec = min(max(16 // out.element_size(), 1), block_c)
    m, n, sx, so = dims[-1][:4]
    if modes[-1] != FLIP or has_value or m % vec or sx != 1 or so != 1:
        vec = 1
    _remap((cdiv(n_rows, block_r) * tiles_c,), x, out, value, n_rows, tiles_c, step, *args, *modes, has_value,
           bits, int64, vec, block_r, block_c, num_warps=num_warps)
    return out


def rank(dims) -> int:
    """How many dims the copy kernel walks for ``dims`` once merged (it takes MAX_RANK at most)."""
    return len(_merged(dims))


def dense_copy(x: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of x (one launch): for kernels that need a layout x does not have."""
    dense = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return remap(x, dense, dims_of(x, dense))
