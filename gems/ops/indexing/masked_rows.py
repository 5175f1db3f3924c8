"""``self[mask]`` where one bool (or uint8) mask covers self's leading dims: the rows of self (its leading dims
flattened, its trailing dims a row) whose mask element is true, in order.

The general path (advanced.py) takes the mask's nonzero indices and gathers through them: after the count is
read to the host, several launches and tables (nonzero's coordinates, the gather's indices) wait on Python
while the device idles, 0.37x ATen for 131072 rows of 1024 bf16 on an H200 though its kernels took less device
time than ATen's. Here the count comes from scan_scatter.py's block counts (one or two launches, the one sync),
and one launch copies the kept rows: each program takes a block of the mask's elements (BLOCK, as the counts)
(or a part of one) and a chunk of the row's columns, walks it ROWS mask elements at a time, ranks the kept ones
(where the block's kept rows start, plus those of its earlier parts, plus a running count) and copies their
columns to those output rows. Measured against ATen on an H200 (one process, do_bench medians): 1.00x for 131072 x
1024 bf16 rows, 1.03x for 16384 x 4096, 0.87x for 4096 x 4096 fp32, 1.13x over two dims (8 x 512 x 4096), 2.4x for
a million rows of 64, 2.1x for a 64M-element 1-d mask.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.ops.compaction.scan_scatter import BLOCK, block_ends, comparable_view, element_flags
from gems.runtime.launch import Launcher, cdiv, next_power_of_2

# A program copies ROWS x COLS elements per step of its walk. On an H200 (x[mask] of 131072 x 1024 and 16384 x 4096
# bf16 rows, 4096 x 4096 fp32, 8 x 512 x 4096 over two dims), 16K elements of up to 128 columns were among the best
# of 4K-32K x 64-1024, within the run-to-run spread of the host's share (the count's sync) of the others.
_TILE = 16384
_MAX_COLS = 128
_PROGRAMS = 1024  # enough programs to fill the device: below it, a block's rows are split among several
_INT32_LIMIT = 2**31 - 1


@triton.jit
def _masked_rows_kernel(mask_ptr, ends_ptr, x_ptr, out_ptr, n_rows, width, stride_row, INT64: tl.constexpr,
                        BLOCK: tl.constexpr, PARTS: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """out[k, c] = x[r, c] for the k-th row r whose mask element is set, r in this program's part (one of PARTS)
    of a block of BLOCK mask elements, c in its chunk of COLS columns."""
    program = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        program = program.to(tl.int64)
    block = program // PARTS
    first = block * BLOCK + (program % PARTS) * (BLOCK // PARTS)
    cols = tl.program_id(1) * COLS + tl.arange(0, COLS)
    in_row = cols < width
    # rows kept before this part: by the blocks before (their counts' cumsum), then by the block's earlier parts
    before = block * BLOCK + tl.arange(0, BLOCK)
    earlier = tl.where(before < first, element_flags(mask_ptr, before, n_rows, False), 0)
    kept = tl.where(block > 0, tl.load(ends_ptr + tl.maximum(block - 1, 0)), 0) + tl.sum(earlier, 0)
    for step in range(0, BLOCK // PARTS, ROWS):
        rows = first + step + tl.arange(0, ROWS)
        flags = element_flags(mask_ptr, rows, n_rows, False)
        position = kept + tl.associative_scan(flags, 0, tl.standard._sum_combine).to(tl.int64) - 1
        take = (flags != 0)[:, None] & in_row[None, :]
        values = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=take)
        tl.store(out_ptr + position[:, None] * width + cols[None, :], values, mask=take)
        kept += tl.sum(flags, 0)


_launch = Launcher(_masked_rows_kernel)


def rows_view(self: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
    """self as (rows, row length) with unit column stride, its rows what ``mask`` covers; None where self's
    leading dims are not mask's shape or self cannot be viewed so (the general path serves it)."""
    k = mask.dim()
    if k == 0 or k > self.dim() or tuple(self.shape[:k]) != tuple(mask.shape) or self.device != mask.device:
        return None
    width = 1
    for n in self.shape[k:]:
        width *= n
    try:
        rows = self.view(-1, width) if self.numel() else None
    except RuntimeError:  # leading dims that do not merge, or a row that is not one run of memory
        return None
    if rows is None or (width > 1 and rows.stride(1) != 1):
        return None
    return rows


def masked_rows(self: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``self[mask]`` for ``rows`` = :func:`rows_view` (self, mask)."""
    n_rows, width = rows.shape
    flags = comparable_view(mask if mask.dtype is torch.bool else mask.view(torch.bool))
    ends, total = block_ends(flags, False)
    out = torch.empty((total, *self.shape[mask.dim():]), dtype=self.dtype, device=self.device)
    if total == 0 or width == 0:
        return out
    src, dst = (rows, out) if self.dtype is not torch.bool else (rows.view(torch.uint8), out.view(torch.uint8))
    cols = min(next_power_of_2(width), _MAX_COLS)
    per_step = max(1, min(BLOCK, _TILE // cols))
    blocks, chunks = cdiv(n_rows, BLOCK), cdiv(width, cols)
    # Blocks cut into parts where blocks x column chunks are few programs for the device (4096 rows: 4 blocks).
    parts = min(BLOCK // per_step, next_power_of_2(max(1, _PROGRAMS // (blocks * chunks))))
    int64 = n_rows * rows.stride(0) + width > _INT32_LIMIT or out.numel() > _INT32_LIMIT
    _launch((blocks * parts, chunks), flags, ends, src, dst, n_rows, width, rows.stride(0), int64, BLOCK, parts,
            per_step, cols, num_warps=4)
    return out
