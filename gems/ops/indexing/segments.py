"""Sums of rows by index, accumulated in fp32 (fp64 for fp64, int64 for integers, a logical or for bool):

    out[w, :] = (out[w, :] +) alpha * sum of src[t, :] over the t whose index is w (or w - n_rows with wrap)

What embedding_dense_backward computes, and index_put with accumulate / index_add on dim 0 in the dtypes
without atomics (fp16, bf16, 8/16-bit integers, bool), where walk.py's scratch would cost three passes over
all of self.

Every row of the result (:func:`sum_rows`, embedding_dense_backward): deterministic sums in token order.

Up to SCAN_MAX tokens, one launch (``_scan_rows_kernel``): every program reads all the indices and adds, for
each row of its tile, the src rows of the tokens naming it in token order (small calls are bound by their
launches). More tokens, sorted sums:

1. gems' stable sort of the indices (gems/ops/sorting): each row's tokens together, in token order;
2. ``_bounds_kernel``: where each row's tokens start among the sorted indices (a binary search per row);
3. ``_rows_kernel``: per tile of BLOCK_W rows x BLOCK_D columns, adds each row's src rows in token order
   and stores the tile, zeros where no token points. A row with many tokens is summed by one program, one
   token per step, so an index repeated thousands of times serializes on that program.

Only the rows some index names, added to what they hold (:func:`add_to_rows`, index_put_ and index_add_):
no sort, and work in proportion to the tokens, not to the rows of self. One program per tile of tokens x
columns; each indexed row is summed by one of its tokens, its *owner*, which adds the row's other tokens
in fp32 and stores the row once (so the result rounds once, as in ATen):

- up to SCAN_MAX tokens, one launch: every program reads all the indices; a token owns its row when no
  earlier token names it, and adds the later ones in token order (the sums do not depend on the run);
- more tokens, three launches: heads (one int32 per row of self) filled with -1; ``_link_kernel`` chains
  each row's tokens through an atomic exchange on its head (next[t] = the previous head); the token left
  in the head owns the row and walks its chain. The chain's order is the order the exchanges landed, so
  float sums may differ in their last bits from one call to the next (as with ATen's atomics).

Indices outside the rows add nothing (and assert on the device with ``check``).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.ops.creation.fill import fill_dense
from gems.ops.indexing.shared import TILE_BYTES
from gems.ops.sorting.sort import sort_values_indices
from gems.runtime.launch import Launcher, cdiv, next_power_of_2

BOUNDS_BLOCK = 1024  # rows whose start one program searches (a few binary searches per thread)
MAX_BLOCK_D = 512  # columns per tile of _rows_kernel: the src rows a step adds are BLOCK_W runs of this many
# Tokens up to which add_to_rows and sum_rows scan all indices in each program (one launch, a few KB read from
# L2 per program) rather than chaining (three launches) or sorting them: small calls are bound by their launches.
SCAN_MAX = 512
SCAN_TILE = 8192  # (tokens or rows of a tile) x (all tokens) compared at once in the scan
LINK_BLOCK = 1024  # tokens per program of _link_kernel
_ACC = {torch.float64: (torch.float64, tl.float64), torch.float32: (torch.float32, tl.float32),
        torch.float16: (torch.float32, tl.float32), torch.bfloat16: (torch.float32, tl.float32)}

# --------------------------------------------------------------------------- kernels: every row, sorted


@triton.jit
def _bounds_kernel(keys_ptr, starts_ptr, n, n_starts, steps, BLOCK: tl.constexpr):
    """starts[j] = the first position of the sorted keys holding a value >= j, j < n_starts."""
    j = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    lo = tl.zeros([BLOCK], tl.int64)
    hi = tl.full([BLOCK], n, tl.int64)
    for _ in range(steps):
        active = lo < hi
        mid = (lo + hi) // 2
        key = tl.load(keys_ptr + mid, mask=active, other=0).to(tl.int64)
        right = active & (key < j)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(active & (right == 0), mid, hi)
    tl.store(starts_ptr + j, lo, mask=j < n_starts)


@triton.jit
def _rows_kernel(src_ptr, order_ptr, starts_ptr, out_ptr, n_rows, n_cols, col_blocks, stride_sn, stride_sd,
                 stride_on, stride_od, skip_row, ACC: tl.constexpr, SCALE: tl.constexpr, BLOCK_W: tl.constexpr,
                 BLOCK_D: tl.constexpr):
    """out[w, :] for this tile's rows: the sum of the src rows of the tokens order[starts[w]:starts[w + 1]],
    zeros for none and for row ``skip_row``; SCALE divides by the row's count. The row values are (BLOCK_W, 1)
    columns, keeping the tile's layout (triton 3.6 fails to compile this loop on Hopper with 1-d row vectors,
    whose layouts its layout pass mismatches)."""
    pid = tl.program_id(0).to(tl.int64)
    w = ((pid // col_blocks) * BLOCK_W + tl.arange(0, BLOCK_W))[:, None]
    cols = (pid % col_blocks) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_mask = (w < n_rows) & (w != skip_row)
    col_mask = cols < n_cols
    lo = tl.load(starts_ptr + w, mask=row_mask, other=0)
    count = tl.load(starts_ptr + w + 1, mask=row_mask, other=0) - lo
    acc = tl.zeros([BLOCK_W, BLOCK_D], ACC)
    for k in range(0, tl.max(count)):
        take = k < count
        token = tl.load(order_ptr + lo + k, mask=take, other=0)
        acc += tl.load(src_ptr + token * stride_sn + cols[None, :] * stride_sd, mask=take & col_mask[None, :],
                       other=0).to(ACC)
    if SCALE:
        acc = acc / tl.maximum(count, 1).to(ACC)
    tl.store(out_ptr + w * stride_on + cols[None, :] * stride_od, acc.to(out_ptr.dtype.element_ty),
             mask=(w < n_rows) & col_mask[None, :])


@triton.jit
def _scan_rows_kernel(src_ptr, index_ptr, out_ptr, n, n_rows, n_cols, col_blocks, stride_i, stride_sn, stride_sd,
                      stride_on, stride_od, skip_row, ACC: tl.constexpr, SCALE: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_W: tl.constexpr, BLOCK_D: tl.constexpr):
    """out[w, :] for this tile's rows from all n (<= BLOCK_N) indices: the sum of the src rows of the tokens
    naming w, in token order (the sorted sums' order), zeros for none and for row ``skip_row``; SCALE divides by
    the row's count. Rows stay (BLOCK_W, 1) columns, as in _rows_kernel."""
    pid = tl.program_id(0).to(tl.int64)
    w = ((pid // col_blocks) * BLOCK_W + tl.arange(0, BLOCK_W))[:, None]
    cols = (pid % col_blocks) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_mask = cols[None, :] < n_cols
    every = tl.arange(0, BLOCK_N)[None, :]
    named = tl.load(index_ptr + every.to(tl.int64) * stride_i, mask=every < n, other=-1).to(tl.int64)
    match = (named == w) & (w != skip_row) & (every < n)
    count = tl.sum(match.to(tl.int32), 1, keep_dims=True)
    acc = tl.zeros([BLOCK_W, BLOCK_D], ACC)
    while tl.max(tl.max(match.to(tl.int32), 1), 0) > 0:
        j = tl.min(tl.where(match, every, BLOCK_N), 1, keep_dims=True)
        more = j < BLOCK_N
        acc += tl.load(src_ptr + j.to(tl.int64) * stride_sn + cols[None, :] * stride_sd, mask=more & col_mask,
                       other=0).to(ACC)
        match = match & (every != j)
    if SCALE:
        acc = acc / tl.maximum(count, 1).to(ACC)
    tl.store(out_ptr + w * stride_on + cols[None, :] * stride_od, acc.to(out_ptr.dtype.element_ty),
             mask=(w < n_rows) & col_mask)


# --------------------------------------------------------------------------- kernels: the indexed rows


@triton.jit
def _row_of(index_ptr, t, stride_i, n_rows, live, WRAP: tl.constexpr, CHECK: tl.constexpr):
    """(the row tokens ``t`` name, whether it is in range); CHECK asserts the range on the device."""
    i = tl.load(index_ptr + t * stride_i, mask=live, other=0).to(tl.int64)
    if WRAP:
        i = tl.where(i < 0, i + n_rows, i)
    ok = live & (i >= 0) & (i < n_rows)
    if CHECK:
        tl.device_assert(ok | (live == 0), "index out of bounds")
    return i, ok


@triton.jit(debug=True)
def _link_kernel(index_ptr, head_ptr, next_ptr, n, n_rows, stride_i, WRAP: tl.constexpr, CHECK: tl.constexpr,
                 BLOCK: tl.constexpr):
    """Chain each row's tokens: next[t] = the row's head before t took its place (-1 for the first)."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    row, ok = _row_of(index_ptr, t, stride_i, n_rows, t < n, WRAP, CHECK)
    previous = tl.atomic_xchg(head_ptr + row, t.to(head_ptr.dtype.element_ty), mask=ok, sem="relaxed")
    tl.store(next_ptr + t, previous, mask=ok)


@triton.jit(debug=True)
def _add_kernel(src_ptr, index_ptr, head_ptr, next_ptr, out_ptr, n, n_rows, n_cols, col_blocks, stride_i,
                stride_sn, stride_sd, stride_on, stride_od, alpha, ACC: tl.constexpr, WRAP: tl.constexpr,
                CHECK: tl.constexpr, CHAINED: tl.constexpr, HAS_ALPHA: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    """out[row] += alpha * the sum of its tokens' src rows, for the rows this tile's tokens own (module
    docstring): CHAINED through head and next, else by scanning all n (<= BLOCK_N) indices."""
    pid = tl.program_id(0).to(tl.int64)
    t = (pid // col_blocks) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = (pid % col_blocks) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_mask = cols[None, :] < n_cols
    src_cols = src_ptr + cols[None, :] * stride_sd
    if CHAINED:
        row, ok = _row_of(index_ptr, t, stride_i, n_rows, t < n, WRAP, False)
        owner = ok & (tl.load(head_ptr + row, mask=ok, other=-1) == t)
        acc = tl.load(src_cols + t[:, None] * stride_sn, mask=owner[:, None] & col_mask, other=0).to(ACC)
        after = tl.load(next_ptr + t, mask=owner, other=-1).to(tl.int64)
        while tl.max(after) >= 0:
            more = after >= 0
            acc += tl.load(src_cols + after[:, None] * stride_sn, mask=more[:, None] & col_mask, other=0).to(ACC)
            after = tl.load(next_ptr + after, mask=more, other=-1).to(tl.int64)
    else:
        row, ok = _row_of(index_ptr, t, stride_i, n_rows, t < n, WRAP, CHECK)
        every = tl.arange(0, BLOCK_N)
        rows, named = _row_of(index_ptr, every.to(tl.int64), stride_i, n_rows, every < n, WRAP, False)
        same = (rows[None, :] == row[:, None]) & named[None, :] & ok[:, None]
        owner = ok & (tl.sum((same & (every[None, :] < t[:, None])).to(tl.int32), 1) == 0)
        acc = tl.load(src_cols + t[:, None] * stride_sn, mask=owner[:, None] & col_mask, other=0).to(ACC)
        later = same & (every[None, :] > t[:, None]) & owner[:, None]
        while tl.max(tl.max(later.to(tl.int32), 1), 0) > 0:
            j = tl.min(tl.where(later, every[None, :], BLOCK_N), 1)
            more = j < BLOCK_N
            acc += tl.load(src_cols + j.to(tl.int64)[:, None] * stride_sn, mask=more[:, None] & col_mask,
                           other=0).to(ACC)
            later = later & (every[None, :] != j[:, None])
    if HAS_ALPHA:
        acc = acc * alpha
    out = out_ptr + row[:, None] * stride_on + cols[None, :] * stride_od
    mask = owner[:, None] & col_mask
    acc += tl.load(out, mask=mask, other=0).to(ACC)
    if out_ptr.dtype.element_ty == tl.int1:
        result = acc != 0
    else:
        result = acc.to(out_ptr.dtype.element_ty)
    tl.store(out, result, mask=mask)


_bounds = Launcher(_bounds_kernel)
_rows = Launcher(_rows_kernel)
_scan_rows = Launcher(_scan_rows_kernel)
_link = Launcher(_link_kernel)
_add = Launcher(_add_kernel)

# --------------------------------------------------------------------------- launchers


def as_rows(t: torch.Tensor) -> torch.Tensor | None:
    """``t`` (at least 1-d) viewed as (its first dim, the others flattened) with no copy, or None."""
    try:
        return t.view(t.shape[0], math.prod(t.shape[1:]))
    except RuntimeError:
        return None


def _accumulator(dtype: torch.dtype):
    return _ACC.get(dtype, (torch.int64, tl.int64))


def sum_rows(out: torch.Tensor, index: torch.Tensor, src: torch.Tensor, *, skip_row: int = -1,
             scale: bool = False) -> torch.Tensor:
    """Every row of the 2-d ``out`` (n_rows, D) = the sum of the rows of the 2-d ``src`` (n, D) whose index
    (1-d, n) names it (in token order, module docstring); indices outside [0, n_rows) add nothing."""
    n_rows, width = out.shape
    n = index.numel()
    if out.numel() == 0:
        return out
    acc, tl_acc = _accumulator(out.dtype)
    block_d = min(next_power_of_2(width), MAX_BLOCK_D)
    block_w = min(next_power_of_2(n_rows), max(1, TILE_BYTES // acc.itemsize // block_d))
    col_blocks = cdiv(width, block_d)
    if 0 < n <= SCAN_MAX:
        block_n = next_power_of_2(n)
        block_w = min(block_w, max(1, SCAN_TILE // block_n))
        _scan_rows((cdiv(n_rows, block_w) * col_blocks,), src, index, out, n, n_rows, width, col_blocks,
                   index.stride(0), src.stride(0), src.stride(1), out.stride(0), out.stride(1), skip_row, tl_acc, scale,
                   block_n, block_w, block_d, num_warps=4)
        return out
    if n:
        keys, order = sort_values_indices(index, 0, stable=True)
    else:
        keys = order = torch.empty(1, dtype=torch.int64, device=out.device)  # never read: every row is empty
    starts = torch.empty(n_rows + 1, dtype=torch.int64, device=out.device)
    _bounds((cdiv(n_rows + 1, BOUNDS_BLOCK),), keys, starts, n, n_rows + 1, n.bit_length() + 1, BOUNDS_BLOCK,
            num_warps=4)
    _rows((cdiv(n_rows, block_w) * col_blocks,), src, order, starts, out, n_rows, width, col_blocks, src.stride(0),
          src.stride(1), out.stride(0), out.stride(1), skip_row, tl_acc, scale, block_w, block_d, num_warps=4)
    return out


def add_to_rows(out: torch.Tensor, index: torch.Tensor, src: torch.Tensor, *, wrap: bool = False, alpha=1,
                check: bool = False) -> torch.Tensor:
    """The rows of the 2-d ``out`` (n_rows, D) that the 1-d ``index`` (n,) names += alpha * the sum of their
    rows of the 2-d ``src`` (n, D) (module docstring); ``wrap``: -n_rows <= i < 0 counts from the end.
    ``check``: assert on the device that every index is in range (the caller checked them on the host where
    kernels are interpreted); otherwise indices out of range add nothing."""
    n_rows, width = out.shape
    n = index.numel()
    if out.numel() == 0 or n == 0:
        return out
    acc, tl_acc = _accumulator(out.dtype)
    alpha = int(alpha) if isinstance(alpha, bool) else alpha  # the interpreter takes no bool argument
    block_d = min(next_power_of_2(width), max(1, TILE_BYTES // acc.itemsize))
    block_t = min(next_power_of_2(n), max(1, TILE_BYTES // acc.itemsize // block_d))
    col_blocks = cdiv(width, block_d)
    chained = n > SCAN_MAX
    if chained:
        links = torch.int32 if n < 2**31 else torch.int64  # token numbers
        head = fill_dense(torch.empty(n_rows, dtype=links, device=out.device), -1)
        after = torch.empty(n, dtype=links, device=out.device)
        _link((cdiv(n, LINK_BLOCK),), index, head, after, n, n_rows, index.stride(0), wrap, check, LINK_BLOCK,
              num_warps=4)
    else:
        head = after = index  # not read
        block_t = min(block_t, max(1, SCAN_TILE // next_power_of_2(n)))
    warps = 8 if block_t * block_d >= 2048 else 4
    _add((cdiv(n, block_t) * col_blocks,), src, index, head, after, out, n, n_rows, width, col_blocks,
         index.stride(0), src.stride(0), src.stride(1), out.stride(0), out.stride(1), alpha, tl_acc, wrap, check,
         chained, alpha != 1, next_power_of_2(n) if not chained else 1, block_t, block_d, num_warps=warps)
    return out
