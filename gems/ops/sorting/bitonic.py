"""What sort.py and topk.py share: order-preserving integer keys, a bitonic network in registers, the
multi-block merge for long rows, and the launcher that runs them along any dim.

Keys. Every element becomes an integer key whose signed order is the wanted order, largest first:
floats (fp16/bf16 through fp32, exactly) by their bits with the negative ones' magnitude bits flipped,
after -0.0 -> +0.0 (they compare equal) and every NaN -> one NaN above +Inf (ATen sorts NaN as the
largest value); integers and bool as they are. Ascending sorts and smallest-k take ``~key`` (the
reverse order, still in range). Keys of at most 32 bits are packed with the element's index into one
int64, ``key << 32 | (2^32 - 1 - index)``: one sort then moves both, and equal keys keep the smaller
index first, so every sort is stable (ATen's stable order). int64 and float64 keys cannot be packed:
they travel as (key, index) pairs compared lexicographically (WIDE), with twice the exchanges.

Network. A tile of BLOCK_M rows x 2^LOG_N lanes is viewed as a hypercube of size-2 dims; a
compare-and-swap along one dim takes each lane's partner as (sum over that dim) - itself, a reduction
of two that the compiler turns into a register move or one shuffle, and which the interpreter runs as
one numpy call (Triton's own xor-reduction calls Python per element there: 86 s for a 4x4096 tile).
Top-k runs the first LOG_K stages, then repeatedly keeps the larger of two opposite-ordered runs of k
(the larger half of a bitonic sequence) and merges it again: log(n/k) cheap steps instead of a sort.
What costs is exchanging across warps, hence one warp per tile of up to 1024 packed keys (the numbers are
at ONE_WARP_LANES). Measured on the H100 and not taken (4096 rows of 1024 fp16, ms; this network at one
warp: sort 0.046, top-64 0.025): tl.sort 0.092 and tl.topk 0.048 (4 warps); the network as a run-time
loop (small code) or with min/max exchanges, no faster than unrolled at the same warps; top-8 as 8 rounds
of max 0.014 against this network's 0.067 at 2 warps, not needed (ATen takes 0.110).

Rows of at least radix.RADIX_MIN elements with keys of at most 32 bits are radix sorted (radix.py). Other long
rows (more than SINGLE_MAX lanes; and rows of more than ONE_WARP_LANES when there are at most FEW_ROWS
of them) are sorted in chunks of CHUNK (ONE_WARP_LANES) into int64 scratch (key, index),
then merged pairwise, each element placed by a binary search of its rank in the other run; the last pass
writes the entries placed in the first n_out. Values are always read back from the input at the sorted indices,
so -0.0 and NaN payloads come out bit for bit.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.sorting import radix
from gems.ops.sorting.keys import order_keys
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback

# One program sorts a whole row of up to SINGLE_MAX elements in registers (at 8 warps, 16 int64 keys
# per thread); longer rows go through chunks of CHUNK and merge passes.
SINGLE_MAX = 4096
CHUNK = 2048
# A short-row tile holds about TILE keys (several rows per program), so that rows of 2-64 elements
# still give each thread a few lanes.
TILE = 1024
MERGE_BLOCK = 1024
# Warps per program. An exchange across warps (shared memory and a barrier) costs far more than one in
# registers or by shuffle. H100, 4096 rows of 1024 fp16, one program per row: sort 0.046 ms at 1 warp
# (32 keys per thread), 0.326 at 2, 0.343 at 4 (ATen 0.110); top-64 0.025 ms at 1 warp, 0.184 at 2,
# 0.221 at 4 (ATen 0.120). Hence one warp for tiles of up to ONE_WARP_LANES packed keys (at most 64
# registers of keys per thread, int64 for 32-bit dtypes). Larger tiles (rows of 2048 and 4096, chunks
# of long rows) and WIDE pairs (twice the registers) were not measured at one warp: they keep 16 keys
# per thread, LANES_PER_WARP.
ONE_WARP_LANES = 1024
LANES_PER_WARP = 512
# A row of 1025..SINGLE_MAX elements takes several warps in one program, whose exchanges across warps are slow
# and whose work no other program shares: one row of 4096 took ~0.16 ms on an H200 (torch.unique of 4096
# elements: 0.20 ms against ATen's 0.08). Up to FEW_ROWS such rows, when sorted whole, are sorted as long rows
# are, in one-warp chunks of ONE_WARP_LANES (several programs per row) and merge passes.
FEW_ROWS = 16
WIDE_DTYPES = (torch.int64, torch.float64)
# 16-bit keys pack with a 16-bit index into one int32 (rows up to SINGLE_MAX): half the registers and
# shuffles of int64 keys. Chunks of long rows keep int64 keys (the merge's scratch format).
NARROW_DTYPES = (torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.uint8, torch.bool)
SORTABLE = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
            torch.int64, torch.uint8, torch.bool)

# --------------------------------------------------------------------------- kernels


@triton.jit
def _side(N_DIMS: tl.constexpr, J: tl.constexpr):
    """0 or 1 along the J-th innermost of N_DIMS size-2 dims: which lane of each pair a lane is."""
    return tl.reshape(tl.arange(0, 2), [1] * (N_DIMS - J - 1) + [2] + [1] * J)


@triton.jit
def _partner(h, N_DIMS: tl.constexpr, J: tl.constexpr):
    # Integer sums wrap on overflow both in the compiled code and in numpy, so the difference is exact.
    return tl.reduce(h, N_DIMS - 1 - J, tl.standard._sum_combine, keep_dims=True) - h


@triton.jit
def _exchange(k, i, flip, N_DIMS: tl.constexpr, J: tl.constexpr, WIDE: tl.constexpr):
    """One compare-and-swap along dim J: in a run ordered largest-last (flip 0) the lane on side 1
    keeps the larger of the pair. Packed keys are unique; WIDE pairs compare (key, then smaller index)."""
    other = _partner(k, N_DIMS, J)
    if WIDE:
        other_i = _partner(i, N_DIMS, J)
        larger = (other > k) | ((other == k) & (other_i < i))
    else:
        other_i = i
        larger = other > k
    take = larger == ((_side(N_DIMS, J) ^ flip) == 1)
    k = tl.where(take, other, k)
    if WIDE:
        i = tl.where(take, other_i, i)
    return k, i


@triton.jit
def _merge(k, i, flip, N_DIMS: tl.constexpr, STAGE: tl.constexpr, WIDE: tl.constexpr):
    for s in tl.static_range(STAGE):
        k, i = _exchange(k, i, flip, N_DIMS, STAGE - 1 - s, WIDE)
    return k, i


@triton.jit
def bitonic_top(k, i, N_DIMS: tl.constexpr, LOG_N: tl.constexpr, LOG_K: tl.constexpr, WIDE: tl.constexpr):
    """The 2^LOG_K largest of each run of 2^LOG_N lanes (the innermost dims of a hypercube of N_DIMS),
    largest first. LOG_K < LOG_N only for packed keys. Returns the hypercube of N_DIMS - LOG_N + LOG_K dims."""
    for stage in tl.static_range(1, LOG_K + 1):
        if stage < LOG_N:
            k, i = _merge(k, i, _side(N_DIMS, stage), N_DIMS, stage, WIDE)
        else:
            k, i = _merge(k, i, 1, N_DIMS, stage, WIDE)
    for step in tl.static_range(LOG_K + 1, LOG_N + 1):
        # Runs of 2^LOG_K alternate ascending/descending: the larger of each facing pair of lanes is
        # a bitonic run holding the larger half of the two runs.
        k = tl.reduce(k, N_DIMS - (step - LOG_K) - LOG_K, tl.standard._elementwise_max)
        if step < LOG_N:
            k, i = _merge(k, i, _side(N_DIMS - (step - LOG_K), LOG_K), N_DIMS - (step - LOG_K), LOG_K, WIDE)
        else:
            k, i = _merge(k, i, 1, N_DIMS - (step - LOG_K), LOG_K, WIDE)
    return k, i


@triton.jit
def _cube(t, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, REG_BITS: tl.constexpr, N_DIMS: tl.constexpr):
    """The [BLOCK_M, BLOCK_N] tile as a hypercube whose innermost dims are the row's top REG_BITS index
    bits, then the others. Where lanes they go does not matter for the result (the index rides in the
    key); for speed: the compiler gives a row's low index bits to lanes and warps and the top REG_BITS
    to each thread's registers, and exchanges along the innermost dims are the most frequent, so they
    become register moves instead of shuffles and shared-memory rounds (for 1024 fp32 lanes at 4 warps,
    sm_90 code: 448 shuffles and 12 barriers per warp instead of 784 and 26)."""
    t3 = tl.reshape(t, [BLOCK_M, 2**REG_BITS, BLOCK_N // 2**REG_BITS])
    return tl.reshape(tl.permute(t3, (0, 2, 1)), [2] * N_DIMS)


@triton.jit
def _row_bases(pid, n_rows, n_inner, stride_o, stride_i, BLOCK_M: tl.constexpr):
    rows = pid.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    return (rows // n_inner) * stride_o + (rows % n_inner) * stride_i, rows < n_rows


@triton.jit
def _sort_tile_kernel(
    x_ptr, values_ptr, indices_ptr, keys_ptr, order_ptr,
    n_rows, n_inner, n, n_out, n_pad,
    stride_xo, stride_xn, stride_xi,
    stride_vo, stride_vn, stride_vi,
    stride_io, stride_in, stride_ii,
    DESCENDING: tl.constexpr, WIDE: tl.constexpr, NARROW: tl.constexpr, TO_SCRATCH: tl.constexpr,
    BLOCK_M: tl.constexpr, LOG_M: tl.constexpr, LOG_N: tl.constexpr, LOG_K: tl.constexpr, REG_BITS: tl.constexpr,
):
    """Rows [pid0 * BLOCK_M, +BLOCK_M) of the (outer, n, inner) view, lanes [pid1 * 2^LOG_N, +2^LOG_N) of
    each: the 2^LOG_K first in sorted order. Written as values/indices (the first n_out of a row), or
    (TO_SCRATCH, a chunk of a long row) as int64 (key, index) pairs into rows of n_pad in scratch."""
    BLOCK_N: tl.constexpr = 2**LOG_N
    BLOCK_K: tl.constexpr = 2**LOG_K
    N_DIMS: tl.constexpr = LOG_M + LOG_N
    x_rows, mask_m = _row_bases(tl.program_id(0), n_rows, n_inner, stride_xo, stride_xi, BLOCK_M)
    offs_n = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    valid = mask_m[:, None] & (offs_n[None, :] < n)
    x = tl.load(x_ptr + x_rows[:, None] + offs_n[None, :] * stride_xn, mask=valid, other=0)
    key = order_keys(x, valid, DESCENDING, WIDE, NARROW)
    index = tl.broadcast_to(offs_n[None, :], [BLOCK_M, BLOCK_N])
    if WIDE:
        k = _cube(key, BLOCK_M, BLOCK_N, REG_BITS, N_DIMS)
        i = _cube(tl.where(valid, index, n), BLOCK_M, BLOCK_N, REG_BITS, N_DIMS)
    else:
        if NARROW:
            packed = (key.to(tl.int32) << 16) | tl.where(valid, 0xFFFF - index, 0).to(tl.int32)
        else:
            packed = (key.to(tl.int64) << 32) | tl.where(valid, 0xFFFFFFFF - index, 0)
        k = _cube(packed, BLOCK_M, BLOCK_N, REG_BITS, N_DIMS)
        i = k
    k, i = bitonic_top(k, i, N_DIMS, LOG_N, LOG_K, WIDE)
    k = tl.reshape(k, [BLOCK_M, BLOCK_K])
    if WIDE:
        i = tl.reshape(i, [BLOCK_M, BLOCK_K])
    elif NARROW:
        i = (0xFFFF - (k & 0xFFFF)).to(tl.int64)
    else:
        i = 0xFFFFFFFF - (k & 0xFFFFFFFF)
    offs_k = tl.arange(0, BLOCK_K)
    if TO_SCRATCH:
        rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        at = rows[:, None] * n_pad + (tl.program_id(1).to(tl.int64) * BLOCK_N + offs_k[None, :])
        tl.store(keys_ptr + at, k, mask=mask_m[:, None])
        tl.store(order_ptr + at, i, mask=mask_m[:, None])
    else:
        out = mask_m[:, None] & (offs_k[None, :] < n_out)
        v = tl.load(x_ptr + x_rows[:, None] + i * stride_xn, mask=out)
        v_rows, _ = _row_bases(tl.program_id(0), n_rows, n_inner, stride_vo, stride_vi, BLOCK_M)
        i_rows, _ = _row_bases(tl.program_id(0), n_rows, n_inner, stride_io, stride_ii, BLOCK_M)
        tl.store(values_ptr + v_rows[:, None] + offs_k[None, :] * stride_vn, v, mask=out)
        tl.store(indices_ptr + i_rows[:, None] + offs_k[None, :] * stride_in, i, mask=out)


@triton.jit
def _merge_place(src_keys_ptr, src_order_ptr, row, p, mask, n_pad, run, search_steps):
    """(key, index, destination) of the scratch entries at p of one merge pass: runs of ``run`` sorted entries
    (largest first) are merged pairwise; an entry's place is its place in its run plus the count of entries of
    the other run that come before it (found by binary search; pairs are unique, so no ties)."""
    k = tl.load(src_keys_ptr + row + p, mask=mask)
    i = tl.load(src_order_ptr + row + p, mask=mask)
    run_id = p // run
    first = (run_id // 2) * 2 * run
    other = first + tl.where(run_id % 2 == 0, run, 0)
    other_len = tl.minimum(tl.maximum(n_pad - other, 0), run)
    lo = p * 0
    hi = other_len
    for _ in range(search_steps):
        mid = (lo + hi) // 2
        probe = mask & (mid < hi)
        ok = tl.load(src_keys_ptr + row + other + mid, mask=probe)
        oi = tl.load(src_order_ptr + row + other + mid, mask=probe)
        before = (ok > k) | ((ok == k) & (oi < i))
        lo = tl.where(probe & before, mid + 1, lo)
        hi = tl.where(probe, tl.where(before, hi, mid), hi)
    return k, i, first + (p - run_id * run) + lo


@triton.jit
def _merge_runs_kernel(src_keys_ptr, src_order_ptr, dst_keys_ptr, dst_order_ptr, n_pad, run, search_steps,
                       BLOCK: tl.constexpr):
    """One merge pass over scratch rows of n_pad (_merge_place), into scratch."""
    row = tl.program_id(0).to(tl.int64) * n_pad
    p = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n_pad
    k, i, dest = _merge_place(src_keys_ptr, src_order_ptr, row, p, mask, n_pad, run, search_steps)
    tl.store(dst_keys_ptr + row + dest, k, mask=mask)
    tl.store(dst_order_ptr + row + dest, i, mask=mask)


@triton.jit
def _merge_out_kernel(src_keys_ptr, src_order_ptr, x_ptr, values_ptr, indices_ptr, n_inner, n_out, n_pad, run,
                      search_steps, stride_xo, stride_xn, stride_xi, stride_vo, stride_vn, stride_vi,
                      stride_io, stride_in, stride_ii, BLOCK: tl.constexpr):
    """The last merge pass (_merge_place), straight into values/indices: the entries placed in the first n_out
    of a row, their values read back from the input (one launch, and a write and a read of the scratch, fewer
    than a last pass into scratch and a gather from it)."""
    r = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    _, i, dest = _merge_place(src_keys_ptr, src_order_ptr, r * n_pad, p, p < n_pad, n_pad, run, search_steps)
    out = (p < n_pad) & (dest < n_out)
    outer, inner = r // n_inner, r % n_inner
    v = tl.load(x_ptr + outer * stride_xo + inner * stride_xi + i * stride_xn, mask=out)
    tl.store(values_ptr + outer * stride_vo + inner * stride_vi + dest * stride_vn, v, mask=out)
    tl.store(indices_ptr + outer * stride_io + inner * stride_ii + dest * stride_in, i, mask=out)


_tile = Launcher(_sort_tile_kernel)
_merge_runs = Launcher(_merge_runs_kernel)
_merge_out = Launcher(_merge_out_kernel)

# --------------------------------------------------------------------------- launchers


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _warps(lanes: int, wide: bool) -> int:
    if lanes <= ONE_WARP_LANES and not wide:
        return 1
    return max(1, min(16, lanes // LANES_PER_WARP))


def _register_bits(log_n: int, warps: int) -> int:
    """How many top index bits of a row each thread holds in registers: Triton's default layout gives
    the 5 lowest to the lanes and the next log2(warps) to the warps (see _cube)."""
    return max(0, log_n - 5 - _log2(warps))


def _three_d(t: torch.Tensor, dim: int) -> tuple[int, int, int]:
    """(outer, n, inner) sizes of ``t`` around ``dim``."""
    outer = 1
    for s in t.shape[:dim]:
        outer *= s
    inner = 1
    for s in t.shape[dim + 1:]:
        inner *= s
    return outer, (t.shape[dim] if t.dim() else 1), inner


def _view3(t: torch.Tensor, sizes) -> torch.Tensor | None:
    try:
        return t.view(sizes)
    except RuntimeError:
        return None


def run_sort(x: torch.Tensor, dim: int, descending: bool, n_out: int, values: torch.Tensor,
             indices: torch.Tensor) -> None:
    """Write the first ``n_out`` of every row of ``x`` along ``dim`` (wrapped, valid), in sorted order
    (largest first when ``descending``; ties in input order), into ``values`` and ``indices`` (their
    size along dim is n_out). Rows of at least radix.RADIX_MIN are radix sorted (radix.py) where their keys have at most
    32 bits; other rows longer than SINGLE_MAX, and top-k of 64-bit keys, sort whole rows."""
    if x.dtype not in SORTABLE:
        raise Fallback(f"sorting {x.dtype} is not handled by gems")
    outer, n, inner = _three_d(x, dim)
    if n >= 2**31:
        raise Fallback("rows of 2^31 elements or more are not handled by gems (the packed index has 32 bits)")
    if x.numel() == 0 or n_out == 0:
        return
    xv = _view3(x, (outer, n, inner))
    if xv is None:
        xv = x.contiguous().view(outer, n, inner)
    results = []  # (result, the (outer, n_out, inner) tensor the kernels write: itself, or a temporary)
    for t in (values, indices):
        view = _view3(t, (outer, n_out, inner))
        results.append((t, view if view is not None else torch.empty((outer, n_out, inner), dtype=t.dtype,
                                                                     device=t.device)))
    vv, iv = results[0][1], results[1][1]
    if x.dtype == torch.bool:  # loaded and stored as its 0/1 bytes
        xv, vv = xv.view(torch.uint8), vv.view(torch.uint8)
    wide = x.dtype in WIDE_DTYPES
    rows = outer * inner
    strides = (*xv.stride(), *vv.stride(), *iv.stride())
    few_long_rows = n > ONE_WARP_LANES and rows <= FEW_ROWS and n_out == n  # top-k keeps its partial network
    if n >= radix.RADIX_MIN and x.dtype in radix.KEY_BITS:
        radix.radix_sort(xv, vv, iv, rows, inner, n, n_out, strides, descending, x.dtype)
    elif n <= SINGLE_MAX and not few_long_rows:
        log_n = _log2(next_power_of_2(max(n, 2)))
        log_k = log_n if wide else max(1, _log2(next_power_of_2(n_out)))  # >= 1: a 1-lane result would be 0-d
        block_m = min(next_power_of_2(rows), max(1, TILE >> log_n))
        warps = _warps(block_m << log_n, wide)
        _tile((cdiv(rows, block_m), 1), xv, vv, iv, iv, iv, rows, inner, n, n_out, 0, *strides, descending, wide,
              x.dtype in NARROW_DTYPES, False, block_m, _log2(block_m), log_n, log_k, _register_bits(log_n, warps),
              num_warps=warps)
    else:
        chunk = CHUNK if n > SINGLE_MAX else ONE_WARP_LANES
        _sort_long(xv, vv, iv, rows, inner, n, n_out, strides, descending, wide, chunk)
    for t, written in results:
        if written.data_ptr() != t.data_ptr():
            t.copy_(written.view(t.shape))


def _sort_long(xv, vv, iv, rows, inner, n, n_out, strides, descending, wide, chunk):
    """Rows of at least two chunks: chunks sorted into scratch, merge passes between the two scratch pairs (the
    second only where there are more than two chunks), the last pass into values/indices."""
    chunks = cdiv(n, chunk)
    assert chunks >= 2, "rows of one chunk are sorted whole"
    n_pad = chunks * chunk
    pairs = 2 if chunks > 2 else 1
    keys = [torch.empty((rows, n_pad), dtype=torch.int64, device=xv.device) for _ in range(pairs)]
    order = [torch.empty((rows, n_pad), dtype=torch.int64, device=xv.device) for _ in range(pairs)]
    log_n = _log2(chunk)
    warps = _warps(chunk, wide)
    _tile((rows, chunks), xv, vv, iv, keys[0], order[0], rows, inner, n, n_pad, n_pad, *strides, descending,
          wide, False, True, 1, 0, log_n, log_n, _register_bits(log_n, warps), num_warps=warps)
    run, src = chunk, 0
    while run * 2 < n_pad:
        _merge_runs((rows, cdiv(n_pad, MERGE_BLOCK)), keys[src], order[src], keys[1 - src], order[1 - src], n_pad,
                    run, run.bit_length(), MERGE_BLOCK, num_warps=4)
        run, src = run * 2, 1 - src
    _merge_out((rows, cdiv(n_pad, MERGE_BLOCK)), keys[src], order[src], xv, vv, iv, inner, n_out, n_pad, run,
               run.bit_length(), *strides, MERGE_BLOCK, num_warps=4)
