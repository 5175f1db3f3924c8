"""Deterministic sums of rows by index, accumulated in fp32 (fp64 for fp64, int64 for integers):

    out[w, :] = (out[w, :] +) alpha * sum of src[t, :] over the t whose index is w (or w - n_rows with wrap)

What embedding_dense_backward computes, and index_put with accumulate / index_add on dim 0 in the dtypes
without atomics (fp16, bf16, 8/16-bit integers, bool), where walk.py's scratch would cost three passes over
all of self. Three steps, no atomics:

1. gems' stable sort of the indices (gems/ops/sorting): each row's tokens together, in token order;
2. ``_bounds_kernel``: where each row's tokens start among the sorted indices (a binary search per row);
3. ``_rows_kernel``: per tile of BLOCK_W rows x BLOCK_D columns, adds each row's src rows in token order,
   then stores the tile: every row (zeros where no token points, embedding_dense_backward), or with
   ``base`` only the rows some token points at, added to what they hold (index_put_, index_add_).

The sum order does not depend on the run. A row with many tokens is summed by one program, one token
per step (the BLOCK_W rows of a tile advance together), so an index repeated thousands of times
serializes on that program. Indices outside the rows add nothing.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.ops.indexing.shared import TILE_BYTES
from gems.ops.sorting.sort import sort_values_indices
from gems.runtime.launch import Launcher, cdiv, next_power_of_2

BOUNDS_BLOCK = 1024  # rows whose start one program searches (a few binary searches per thread)
MAX_BLOCK_D = 512  # columns per tile: the src rows a step adds are BLOCK_W runs of this many elements
_ACC = {torch.float64: (torch.float64, tl.float64), torch.float32: (torch.float32, tl.float32),
        torch.float16: (torch.float32, tl.float32), torch.bfloat16: (torch.float32, tl.float32)}

# --------------------------------------------------------------------------- kernels


@triton.jit(debug=True)
def _bounds_kernel(keys_ptr, starts_ptr, n, first, n_starts, steps, CHECK: tl.constexpr, BLOCK: tl.constexpr):
    """starts[j] = the first position of the sorted keys holding a value >= first + j, j < n_starts. CHECK:
    assert on the device that every key is in [first, first + n_starts - 1) (the smallest and the largest)."""
    if CHECK:
        lowest = tl.load(keys_ptr).to(tl.int64)
        highest = tl.load(keys_ptr + n - 1).to(tl.int64)
        tl.device_assert((lowest >= first) & (highest < first + n_starts - 1), "index out of bounds")
    j = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    value = first + j
    lo = tl.zeros([BLOCK], tl.int64)
    hi = tl.full([BLOCK], n, tl.int64)
    for _ in range(steps):
        active = lo < hi
        mid = (lo + hi) // 2
        key = tl.load(keys_ptr + mid, mask=active, other=0).to(tl.int64)
        right = active & (key < value)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(active & (right == 0), mid, hi)
    tl.store(starts_ptr + j, lo, mask=j < n_starts)


@triton.jit
def _add_tokens(acc, src_ptr, order_ptr, starts_ptr, j, row_mask, cols, col_mask, stride_sn, stride_sd,
                ACC: tl.constexpr):
    """acc + the src rows of the tokens order[starts[j]:starts[j + 1]] (per row of the tile), and their count.
    j and row_mask are (BLOCK_W, 1) columns: the row values keep the tile's layout (triton 3.6 fails to compile
    this loop on Hopper with 1-d row vectors, whose layouts its layout pass mismatches)."""
    lo = tl.load(starts_ptr + j, mask=row_mask, other=0)
    count = tl.load(starts_ptr + j + 1, mask=row_mask, other=0) - lo
    for k in range(0, tl.max(count)):
        take = k < count
        token = tl.load(order_ptr + lo + k, mask=take, other=0)
        acc += tl.load(src_ptr + token * stride_sn + cols[None, :] * stride_sd, mask=take & col_mask[None, :],
                       other=0).to(ACC)
    return acc, count


@triton.jit
def _rows_kernel(src_ptr, order_ptr, starts_ptr, out_ptr, n_rows, n_cols, col_blocks, stride_sn, stride_sd,
                 stride_on, stride_od, skip_row, alpha, ACC: tl.constexpr, WRAP: tl.constexpr, BASE: tl.constexpr,
                 SCALE: tl.constexpr, HAS_ALPHA: tl.constexpr, BLOCK_W: tl.constexpr, BLOCK_D: tl.constexpr):
    """out[w, :] for this tile's rows (see the module docstring); starts holds n_rows + 1 bounds, 2 * n_rows + 1
    with WRAP (values from -n_rows). No token adds to row ``skip_row``; SCALE divides by the row's count."""
    pid = tl.program_id(0).to(tl.int64)
    w = (pid // col_blocks) * BLOCK_W + tl.arange(0, BLOCK_W)
    cols = (pid % col_blocks) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_mask = ((w < n_rows) & (w != skip_row))[:, None]
    col_mask = cols < n_cols
    acc = tl.zeros([BLOCK_W, BLOCK_D], ACC)
    if WRAP:
        acc, count = _add_tokens(acc, src_ptr, order_ptr, starts_ptr, w[:, None], row_mask, cols, col_mask,
                                 stride_sn, stride_sd, ACC)
        acc, more = _add_tokens(acc, src_ptr, order_ptr, starts_ptr, w[:, None] + n_rows, row_mask, cols,
                                col_mask, stride_sn, stride_sd, ACC)
        count += more
    else:
        acc, count = _add_tokens(acc, src_ptr, order_ptr, starts_ptr, w[:, None], row_mask, cols, col_mask,
                                 stride_sn, stride_sd, ACC)
    if SCALE:
        acc = acc / tl.maximum(count, 1).to(ACC)
    if HAS_ALPHA:
        acc = acc * alpha
    out = out_ptr + w[:, None] * stride_on + cols[None, :] * stride_od
    mask = (w < n_rows)[:, None] & col_mask[None, :]
    if BASE:
        mask = mask & (count > 0)
        acc += tl.load(out, mask=mask, other=0).to(ACC)
    if out_ptr.dtype.element_ty == tl.int1:
        result = acc != 0
    else:
        result = acc.to(out_ptr.dtype.element_ty)
    tl.store(out, result, mask=mask)


_bounds = Launcher(_bounds_kernel)
_rows = Launcher(_rows_kernel)

# --------------------------------------------------------------------------- launcher


def as_rows(t: torch.Tensor) -> torch.Tensor | None:
    """``t`` (at least 1-d) viewed as (its first dim, the others flattened) with no copy, or None."""
    try:
        return t.view(t.shape[0], math.prod(t.shape[1:]))
    except RuntimeError:
        return None


def add_rows(out: torch.Tensor, index: torch.Tensor, src: torch.Tensor, *, base: bool, wrap: bool = False,
             skip_row: int = -1, scale: bool = False, alpha=1, check: bool = False) -> torch.Tensor:
    """The sums of the module docstring into the 2-d ``out`` (n_rows, D), from the 1-d ``index`` (n,) and the
    2-d ``src`` (n, D): every row written (``base`` False) or the rows some index names added to (True).
    ``check``: assert on the device that every index is in range (the caller checked them on the host where
    kernels are interpreted); otherwise indices out of range add nothing."""
    n_rows, width = out.shape
    n = index.numel()
    if out.numel() == 0 or (base and n == 0):
        return out
    if n:
        keys, order = sort_values_indices(index, 0, stable=True)
    else:
        keys = order = torch.empty(1, dtype=torch.int64, device=out.device)  # never read: every row is empty
    first, n_starts = (-n_rows, 2 * n_rows + 1) if wrap else (0, n_rows + 1)
    starts = torch.empty(n_starts, dtype=torch.int64, device=out.device)
    _bounds((cdiv(n_starts, BOUNDS_BLOCK),), keys, starts, n, first, n_starts, n.bit_length() + 1, check and n > 0,
            BOUNDS_BLOCK, num_warps=4)
    acc, tl_acc = _ACC.get(out.dtype, (torch.int64, tl.int64))
    alpha = int(alpha) if isinstance(alpha, bool) else alpha  # the interpreter takes no bool argument
    block_d = min(next_power_of_2(width), MAX_BLOCK_D)
    block_w = min(next_power_of_2(n_rows), max(1, TILE_BYTES // acc.itemsize // block_d))
    col_blocks = cdiv(width, block_d)
    _rows((cdiv(n_rows, block_w) * col_blocks,), src, order, starts, out, n_rows, width, col_blocks, src.stride(0),
          src.stride(1), out.stride(0), out.stride(1), skip_row, alpha, tl_acc, wrap, base, scale, alpha != 1,
          block_w, block_d, num_warps=4)
    return out
