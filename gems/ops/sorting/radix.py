"""LSD radix sort of long rows, for run_sort (bitonic.py): rows of at least RADIX_MIN elements whose keys
have at most 32 bits (64-bit dtypes keep bitonic.py's merge passes: see KEY_BITS).

Keys are keys.order_keys' (the order wanted is theirs, largest first), turned into unsigned
``u = 2^(KEY_BITS-1) - 1 - key`` (ascending u is the wanted order) of KEY_BITS bits, and packed with the
element's index as ``u << 32 | index`` into one int64: one array moves per pass. Each pass orders the
entries stably by DIGIT_BITS bits of u, lowest digit first, so after the last pass they are in u order and
equal keys in input order (stable, as ATen's stable sort, descending as well). A pass is three launches
over a row of n_tiles tiles of TILE elements:

1. histogram: counts[row, digit, tile] (digit-major);
2. scan: the exclusive prefix sum of a row's counts, in that order, is where each tile's first entry of
   each digit goes;
3. scatter: each tile again, in blocks of BLOCK; an entry goes to its (digit, tile) base plus the number
   of entries of its digit before it in the tile (a cumulative sum over a one-hot [BLOCK, RADIX] tile).

The first pass reads the input (and makes the keys), the last writes values (read back from the input at
the sorted indices, so -0.0 and NaN payloads come out bit for bit) and indices, only those placed in the
first n_out; passes in between ping-pong between two int64 scratch rows.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.sorting.keys import order_keys
from gems.runtime.launch import Launcher, cdiv

# Rows this long or longer are radix sorted. Below it the merge path wins on launches: it takes
# 1 + log2(n / 2048) launches (6 at 2^16), radix 3 per pass (12 for 16-bit keys, 24 for 32-bit),
# which bound the time of a single short row. From 2^16 the merge does 5 or more passes in which every
# element makes 12 to 16 dependent random probes; radix streams 24 bytes per element per pass. Not yet
# measured on a GPU (H200 today: 16M fp16 in one row, merge 12.4 ms against ATen's 1.78).
RADIX_MIN = 2**16
# Bits of the key that vary (of u, see the docstring): 8-bit integers fit in 8, uint8 needs 9 (its
# ascending keys ~x reach -256), bool 2. int64/float64 keys (64 bits, 16 passes, and key and index no
# longer packed into one int64: twice the traffic) stay on the merge path.
KEY_BITS = {torch.bool: 2, torch.int8: 8, torch.uint8: 9, torch.int16: 16, torch.float16: 16,
            torch.bfloat16: 16, torch.int32: 32, torch.float32: 32}
# A 16-wide one-hot rank tile of BLOCK x RADIX int32; 8-bit digits would halve the passes but need a
# 256-wide tile (or 16x smaller blocks).
DIGIT_BITS = 4
RADIX = 2**DIGIT_BITS
# Elements per histogram/scatter program: counts per row are RADIX * n / TILE (64K for 16M elements), a
# short scan for one program per row.
TILE = 4096
SCAN_BLOCK = 4096
# The scatter ranks BLOCK entries at a time, one per thread. sm_90 registers a thread (ptxas, fp16, no
# spills): 8 warps and BLOCK 256: 80-91; 4 warps and 512: 255; 4 and 256: 161-167; 4 and 128: 72 (twice
# the iterations, each with its cross-warp cumsum).
BLOCK = 256
SCATTER_WARPS = 8
WARPS = 4

# --------------------------------------------------------------------------- kernels


@triton.jit
def _row_base(r, n_inner, stride_o, stride_i):
    return (r // n_inner) * stride_o + (r % n_inner) * stride_i


@triton.jit
def _entries(x_ptr, src_ptr, r, offs, mask, n, n_inner, stride_xo, stride_xn, stride_xi,
             FROM_INPUT: tl.constexpr, DESCENDING: tl.constexpr, KEY_BITS: tl.constexpr):
    """Packed entries ``u << 32 | index`` at offs of row r: made from the input, or read from scratch."""
    if FROM_INPUT:
        x = tl.load(x_ptr + _row_base(r, n_inner, stride_xo, stride_xi) + offs * stride_xn, mask=mask, other=0)
        key = order_keys(x, mask, DESCENDING, False, KEY_BITS <= 16)
        u = (2 ** (KEY_BITS - 1) - 1) - key.to(tl.int64)
        return (u << 32) | offs
    else:
        return tl.load(src_ptr + r * n + offs, mask=mask, other=0)


@triton.jit
def _digit(entry, SHIFT: tl.constexpr, RADIX: tl.constexpr):
    # u is taken back unsigned first: a digit reaching past bit 31 of u must see zeros, not u's sign copies.
    return ((((entry >> 32) & 0xFFFFFFFF) >> SHIFT) & (RADIX - 1)).to(tl.int32)


@triton.jit
def _histogram_kernel(x_ptr, src_ptr, counts_ptr, n, n_tiles, n_inner, stride_xo, stride_xn, stride_xi,
                      SHIFT: tl.constexpr, FROM_INPUT: tl.constexpr, DESCENDING: tl.constexpr,
                      KEY_BITS: tl.constexpr, RADIX: tl.constexpr, TILE: tl.constexpr):
    """counts[r, d, t] = how many entries of tile t of row r have digit d; one program per (row, tile)."""
    pid = tl.program_id(0).to(tl.int64)
    r, t = pid // n_tiles, pid % n_tiles
    offs = t * TILE + tl.arange(0, TILE)
    mask = offs < n
    entry = _entries(x_ptr, src_ptr, r, offs, mask, n, n_inner, stride_xo, stride_xn, stride_xi, FROM_INPUT,
                     DESCENDING, KEY_BITS)
    hist = tl.histogram(_digit(entry, SHIFT, RADIX), RADIX, mask=mask)
    tl.store(counts_ptr + (r * RADIX + tl.arange(0, RADIX)) * n_tiles + t, hist)


@triton.jit
def _scan_kernel(counts_ptr, size, BLOCK: tl.constexpr):
    """The exclusive prefix sum of each row of ``size`` counts, in place; one program per row."""
    row = counts_ptr + tl.program_id(0).to(tl.int64) * size
    carry = tl.full([], 0, tl.int32)
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < size
        c = tl.load(row + offs, mask=mask, other=0)
        tl.store(row + offs, carry + tl.cumsum(c, 0) - c, mask=mask)
        carry += tl.sum(c, 0)


@triton.jit
def _scatter_kernel(x_ptr, src_ptr, dst_ptr, offsets_ptr, values_ptr, indices_ptr, n, n_out, n_tiles, n_inner,
                    stride_xo, stride_xn, stride_xi, stride_vo, stride_vn, stride_vi, stride_io, stride_in, stride_ii,
                    SHIFT: tl.constexpr, FROM_INPUT: tl.constexpr, TO_OUTPUT: tl.constexpr,
                    DESCENDING: tl.constexpr, KEY_BITS: tl.constexpr, RADIX: tl.constexpr, TILE: tl.constexpr,
                    BLOCK: tl.constexpr):
    """One pass's stable scatter of tile t of row r (one program each) to offsets[r, digit, t] onwards, in
    input order within each digit: into scratch, or (TO_OUTPUT) values/indices where they land before n_out."""
    pid = tl.program_id(0).to(tl.int64)
    r, t = pid // n_tiles, pid % n_tiles
    bins = tl.arange(0, RADIX)
    next_at = tl.load(offsets_ptr + (r * RADIX + bins) * n_tiles + t)  # where this tile's next entry of a digit goes
    for start in range(0, TILE, BLOCK):
        offs = t * TILE + start + tl.arange(0, BLOCK)
        mask = offs < n
        entry = _entries(x_ptr, src_ptr, r, offs, mask, n, n_inner, stride_xo, stride_xn, stride_xi, FROM_INPUT,
                         DESCENDING, KEY_BITS)
        hit = ((_digit(entry, SHIFT, RADIX)[:, None] == bins[None, :]) & mask[:, None]).to(tl.int32)
        before = tl.cumsum(hit, 0) - hit  # entries of the same digit earlier in this block
        dest = tl.sum(tl.where(hit != 0, before + next_at[None, :], 0), 1).to(tl.int64)
        next_at += tl.sum(hit, 0)
        if TO_OUTPUT:
            i = entry & 0xFFFFFFFF
            out = mask & (dest < n_out)
            v = tl.load(x_ptr + _row_base(r, n_inner, stride_xo, stride_xi) + i * stride_xn, mask=out)
            tl.store(values_ptr + _row_base(r, n_inner, stride_vo, stride_vi) + dest * stride_vn, v, mask=out)
            tl.store(indices_ptr + _row_base(r, n_inner, stride_io, stride_ii) + dest * stride_in, i, mask=out)
        else:
            tl.store(dst_ptr + r * n + dest, entry, mask=mask)


_histogram = Launcher(_histogram_kernel)
_scan = Launcher(_scan_kernel)
_scatter = Launcher(_scatter_kernel)

# --------------------------------------------------------------------------- launcher


def radix_sort(xv, vv, iv, rows, inner, n, n_out, strides, descending, dtype):
    """run_sort's long rows of a dtype in KEY_BITS: the first n_out of every row of the (outer, n, inner) view
    ``xv`` (bool viewed as uint8) in sorted order into ``vv`` and ``iv`` (strides: theirs, xv's first)."""
    key_bits = KEY_BITS[dtype]
    passes = cdiv(key_bits, DIGIT_BITS)
    n_tiles = cdiv(n, TILE)
    counts = torch.empty((rows, RADIX * n_tiles), dtype=torch.int32, device=xv.device)
    scratch = [torch.empty((rows, n), dtype=torch.int64, device=xv.device) for _ in range(min(2, passes - 1))]
    x_strides = strides[:3]
    for p in range(passes):
        first, last = p == 0, p == passes - 1
        src = iv if first else scratch[(p - 1) % 2]  # iv: any int64 tensor where nothing is read or written
        dst = iv if last else scratch[p % 2]
        shift = p * DIGIT_BITS
        grid = (rows * n_tiles,)
        _histogram(grid, xv, src, counts, n, n_tiles, inner, *x_strides, shift, first, descending, key_bits, RADIX,
                   TILE, num_warps=WARPS)
        _scan((rows,), counts, RADIX * n_tiles, SCAN_BLOCK, num_warps=WARPS)
        _scatter(grid, xv, src, dst, counts, vv, iv, n, n_out, n_tiles, inner, *strides, shift, first, last,
                 descending, key_bits, RADIX, TILE, BLOCK, num_warps=SCATTER_WARPS)
