"""What nonzero, unique_consecutive and _unique2 share: compaction of the flagged elements of a 1-d
sequence, by blocks.

    flag[i] = x[i] != 0                       (NONZERO: NaN counts, -0.0 does not)
    flag[i] = i == 0 or x[i] != x[i - 1]      (BOUNDARY: a run of equal values starts; NaN != NaN, so
                                               each NaN starts its own run, and -0.0 joins a run of 0.0)

The sequence is cut into blocks of BLOCK elements:

1. ``_count_kernel``: each block's number of flags;
2. gems' cumsum (gems/ops/reduction/cumsum.py) of those counts: where each block's flagged elements end
   in the output; its last value, the total, is read to the host (the one sync, as in ATen) to size the
   outputs. Up to FEW_BLOCKS blocks, one program of ``_ends_kernel`` does both steps (one launch before
   the sync instead of two: small calls wait on every launch before it);
3. the operator's scatter kernel evaluates its flags again (``element_flags``), ranks them within the
   block (an inclusive scan in registers) and writes each flagged element at the block's start plus its
   rank (``block_ranks``).

For runs (unique_consecutive, _unique2) the scatter is ``_runs_kernel``: each run's first value, each
element's run (the inverse; every element's rank is its run), and where each run starts, from which
``_run_lengths_kernel`` takes the counts. Given int flags instead of values (NONZERO mode on them),
the same kernel gives the runs of unique_consecutive's equal slices.

The input is read twice and nothing of size n is written besides the results: for nonzero of 16M fp32
that is 128 MB of reads, where a flags array and a scan of it would add writes and reads of the flags.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.native.read_record import read_count
from gems.ops.reduction.cumsum import cumsum
from gems.ops.reduction.planning import reduce_sum
from gems.runtime.launch import Launcher, cdiv, next_power_of_2

# Elements per program: 8 per thread at 4 warps, and 1/1024 of n block counts to scan. Under the
# interpreter a larger block means fewer programs (the cost there is per program).
BLOCK = 1024
NUM_WARPS = 4
FEW_BLOCKS = 8  # blocks one program of _ends_kernel loads at once (8K elements, 32 per thread at 8 warps)

# --------------------------------------------------------------------------- kernels


@triton.jit
def comparable(x):
    # fp16/bf16 compared as fp32 (exact; the interpreter holds bf16 as raw bits, where -0.0 != 0.0).
    # One return after a static if/else: the GPU compiler rejects returns of two types (the interpreter
    # never sees the branch not taken).
    if x.dtype.is_fp16() or x.dtype.is_bf16():
        y = x.to(tl.float32)
    else:
        y = x
    return y


@triton.jit
def element_flags(x_ptr, offs, n, BOUNDARY: tl.constexpr):
    """int32 1 where element offs of the contiguous x is flagged (see the module docstring), 0 elsewhere
    and past n."""
    mask = offs < n
    x = comparable(tl.load(x_ptr + offs, mask=mask, other=0))
    if BOUNDARY:
        prev = comparable(tl.load(x_ptr + offs - 1, mask=mask & (offs > 0), other=0))
        flag = mask & ((offs == 0) | (x != prev))
    else:
        flag = mask & (x != 0)
    return flag.to(tl.int32)


@triton.jit
def block_ranks(ends_ptr, flags, pid):
    """Output position (int64) of each element's latest flag at or before it: this block's start (the
    flags of the blocks before it) plus the inclusive rank within the block, minus one. An element that
    is not flagged gets the position of the flagged element before it (its run, for BOUNDARY)."""
    start = tl.where(pid > 0, tl.load(ends_ptr + tl.maximum(pid - 1, 0)), 0)
    # tl.associative_scan with triton's own combine, not tl.cumsum: see reduce_sum in planning.py.
    return start + tl.associative_scan(flags, 0, tl.standard._sum_combine).to(tl.int64) - 1


@triton.jit
def _count_kernel(x_ptr, counts_ptr, n, BOUNDARY: tl.constexpr, BLOCK: tl.constexpr):
    """counts[b] = flags in block b."""
    pid = tl.program_id(0).to(tl.int64)
    flags = element_flags(x_ptr, pid * BLOCK + tl.arange(0, BLOCK), n, BOUNDARY)
    tl.store(counts_ptr + pid, reduce_sum(flags, 0).to(tl.int64))


@triton.jit
def _ends_kernel(x_ptr, ends_ptr, n, BOUNDARY: tl.constexpr, BLOCKS: tl.constexpr, BLOCK: tl.constexpr):
    """ends[b] = flags in blocks 0..b, b < BLOCKS, by one program (one load of all BLOCKS blocks)."""
    b = tl.arange(0, BLOCKS)
    flags = element_flags(x_ptr, (b * BLOCK)[:, None] + tl.arange(0, BLOCK)[None, :], n, BOUNDARY)
    ends = tl.associative_scan(reduce_sum(flags, 1).to(tl.int64), 0, tl.standard._sum_combine)
    tl.store(ends_ptr + b, ends, mask=b * BLOCK < n)


@triton.jit
def _runs_kernel(
    x_ptr, ends_ptr, perm_ptr, values_ptr, inverse_ptr, starts_ptr, n,
    BOUNDARY: tl.constexpr, HAS_PERM: tl.constexpr, INVERSE: tl.constexpr, STARTS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Runs of x (contiguous, n elements), each starting at a flagged element (BOUNDARY: runs of equal
    values, whose first values go to values[r]; else x holds the flags): INVERSE: inverse[perm[i]
    (HAS_PERM) or i] = the run of element i; STARTS: starts[r] = where run r begins."""
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    flags = element_flags(x_ptr, offs, n, BOUNDARY)
    run = block_ranks(ends_ptr, flags, pid)
    first = flags != 0
    if BOUNDARY:
        tl.store(values_ptr + run, tl.load(x_ptr + offs, mask=first), mask=first)
    if INVERSE:
        dest = offs
        if HAS_PERM:
            dest = tl.load(perm_ptr + offs, mask=mask, other=0)
        tl.store(inverse_ptr + dest, run, mask=mask)
    if STARTS:
        tl.store(starts_ptr + run, offs, mask=first)


@triton.jit
def _run_lengths_kernel(starts_ptr, counts_ptr, runs, n, BLOCK: tl.constexpr):
    """counts[r] = starts[r + 1] - starts[r], the last run ending at n."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < runs
    start = tl.load(starts_ptr + offs, mask=mask, other=0)
    end = tl.load(starts_ptr + offs + 1, mask=(offs + 1) < runs, other=n)
    tl.store(counts_ptr + offs, end - start, mask=mask)


_count_launcher = Launcher(_count_kernel)
_ends_launcher = Launcher(_ends_kernel)
_runs_launcher = Launcher(_runs_kernel)
_run_lengths_launcher = Launcher(_run_lengths_kernel)

# --------------------------------------------------------------------------- launchers


def comparable_view(x: torch.Tensor) -> torch.Tensor:
    """x flattened contiguous, bool as its 0/1 bytes (no int1 loads in the kernels)."""
    x = x.contiguous().view(-1)
    return x.view(torch.uint8) if x.dtype == torch.bool else x


def block_ends(x: torch.Tensor, boundary: bool) -> tuple[torch.Tensor, int]:
    """(ends, total) for a flat contiguous non-empty ``x``: ends[b] = flags in blocks 0..b (int64, on the
    device), total = all flags (read to the host)."""
    ends = device_block_ends(x, boundary)
    return ends, read_count(ends[-1], x.numel())


def device_block_ends(x: torch.Tensor, boundary: bool) -> torch.Tensor:
    """:func:`block_ends`'s ends alone, left on the device (no synchronization)."""
    n = x.numel()
    blocks = cdiv(n, BLOCK)
    counts = torch.empty(blocks, dtype=torch.int64, device=x.device)
    if blocks <= FEW_BLOCKS:
        _ends_launcher((1,), x, counts, n, boundary, next_power_of_2(blocks), BLOCK, num_warps=8)
        return counts
    _count_launcher((blocks,), x, counts, n, boundary, BLOCK, num_warps=NUM_WARPS)
    return cumsum(counts, 0)


def grid(n: int) -> tuple:
    return (cdiv(n, BLOCK),)


def runs(x: torch.Tensor, inverse: bool, counts: bool, perm: torch.Tensor | None = None, boundary: bool = True):
    """(values, inverse, counts, starts) of the runs of a flat contiguous non-empty ``x`` (a
    comparable_view). With ``boundary``, runs of equal values, and values = the first value of each;
    else x holds int flags, each nonzero one starting a run (unique_consecutive's runs of equal slices),
    and values is None. On request: each element's run (int64, written at ``perm[i]`` for element i when
    perm is given: _unique2's sorted order back to the input's) and each run's length; starts = where
    each run begins, when counts were asked or x holds flags. None for what was not asked."""
    n = x.numel()
    ends, total = block_ends(x, boundary)
    values = torch.empty(total, dtype=x.dtype, device=x.device) if boundary else None
    inv = torch.empty(n, dtype=torch.int64, device=x.device) if inverse else None
    with_starts = counts or not boundary
    starts = torch.empty(total, dtype=torch.int64, device=x.device) if with_starts else None
    spare = ends  # a valid pointer for the outputs a launch does not write
    _runs_launcher(grid(n), x, ends, spare if perm is None else perm, spare if values is None else values,
                   spare if inv is None else inv, spare if starts is None else starts, n,
                   boundary, perm is not None, inverse, with_starts, BLOCK, num_warps=NUM_WARPS)
    lengths = None
    if counts:
        lengths = torch.empty(total, dtype=torch.int64, device=x.device)
        _run_lengths_launcher(grid(total), starts, lengths, total, n, BLOCK, num_warps=NUM_WARPS)
    return values, inv, lengths, starts
