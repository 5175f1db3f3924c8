"""unique_consecutive: ``unique_consecutive`` (torch.unique_consecutive, Tensor.unique_consecutive) over
the flattened input: the first value of each run of equal consecutive elements, and on request each
element's run (``return_inverse``, shaped like the input) and each run's length (``return_counts``);
outputs not asked for are empty int64 tensors, as in ATen. Equality is ``==``: each NaN is a run of its
own, and -0.0 joins a run of 0.0 (the run keeps its first value), as in ATen's CPU and CUDA kernels.

Runs are found and written by the compaction of scan_scatter.py (flag: an element differs from the one
before it). With ``dim=``, runs of equal slices along dim: a kernel flags each slice that differs from
the one before it (NaN differs, -0.0 equals 0.0, as ATen compares them), the compaction ranks those flags,
and a second kernel copies each run's first slice.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL, FLOATS
from gems.ops.compaction.scan_scatter import comparable, comparable_view, runs
from gems.ops.reduction.planning import reduce_max, wrap_dim
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec

# Slices (rows of the dim-first view) per program, and elements of a row per step: 4K-element tiles.
BLOCK_M = 16
BLOCK_K = 256

# --------------------------------------------------------------------------- kernels


@triton.jit
def _slice_flags_kernel(y_ptr, flags_ptr, n_rows, row_len, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """flags[i] = 1 where row i of y (n_rows x row_len, contiguous) starts a run: i == 0, or an element
    differs from row i - 1's."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = rows < n_rows
    differs = tl.full([BLOCK_M], 0, tl.int32)
    for k in range(0, row_len, BLOCK_K):
        cols = k + tl.arange(0, BLOCK_K)
        mask = (mask_m & (rows > 0))[:, None] & (cols < row_len)[None, :]
        here = y_ptr + rows[:, None] * row_len + cols[None, :]
        a = comparable(tl.load(here, mask=mask, other=0))
        b = comparable(tl.load(here - row_len, mask=mask, other=0))
        differs = tl.maximum(differs, reduce_max((a != b).to(tl.int32), 1))
    tl.store(flags_ptr + rows, ((rows == 0) | (differs > 0)).to(tl.int32), mask=mask_m)


@triton.jit
def _gather_rows_kernel(y_ptr, starts_ptr, out_ptr, n_runs, row_len, BLOCK_M: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    """out[r, :] = y[starts[r], :] (both row-major with rows of row_len)."""
    runs = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = runs < n_runs
    src = tl.load(starts_ptr + runs, mask=mask_m, other=0)
    for k in range(0, row_len, BLOCK_K):
        cols = k + tl.arange(0, BLOCK_K)
        mask = mask_m[:, None] & (cols < row_len)[None, :]
        v = tl.load(y_ptr + src[:, None] * row_len + cols[None, :], mask=mask)
        tl.store(out_ptr + runs[:, None] * row_len + cols[None, :], v, mask=mask)


_slice_flags_launcher = Launcher(_slice_flags_kernel)
_gather_rows_launcher = Launcher(_gather_rows_kernel)

# --------------------------------------------------------------------------- ATen overloads


def _unasked(x):
    """What ATen returns for an output not asked for (and for empty inputs): a fresh empty int64 tensor."""
    return torch.empty(0, dtype=torch.int64, device=x.device)


def unique_runs(x, return_inverse, return_counts, perm=None, shape=None):
    """(values, inverse, counts) as ATen returns them, from the runs of the flattened ``x``, the inverse
    shaped like x or ``shape``; shared with _unique2, which passes the sorted values and where each came
    from (perm: see scan_scatter.runs)."""
    if x.dtype not in ALL:
        raise Fallback(f"unique of {x.dtype} is left to ATen")
    flat = comparable_view(x)
    shape = x.shape if shape is None else shape
    if flat.numel() == 0:
        inverse = torch.empty(shape, dtype=torch.int64, device=x.device) if return_inverse else _unasked(x)
        return torch.empty(0, dtype=x.dtype, device=x.device), inverse, _unasked(x)
    values, inverse, counts, _ = runs(flat, return_inverse, return_counts, perm)
    if x.dtype == torch.bool:
        values = values.view(torch.bool)
    return (values, inverse.view(shape) if return_inverse else _unasked(x),
            counts if return_counts else _unasked(x))


def _slice_runs(x, return_inverse, return_counts, dim):
    """unique_consecutive with dim: runs of equal slices x.select(dim, i)."""
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, x.dim())
    if x.dtype not in ALL:
        raise Fallback(f"unique of {x.dtype} is left to ATen")
    if any(size == 0 for d, size in enumerate(x.shape) if d != dim):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    n_rows = x.shape[dim]
    if n_rows == 0:
        return torch.empty(x.shape, dtype=x.dtype, device=x.device), _unasked(x), _unasked(x)
    moved = x.movedim(dim, 0)
    y = comparable_view(moved)
    row_len = y.numel() // n_rows
    flags = torch.empty(n_rows, dtype=torch.int32, device=x.device)
    _slice_flags_launcher((cdiv(n_rows, BLOCK_M),), y, flags, n_rows, row_len, BLOCK_M, BLOCK_K, num_warps=4)
    _, inverse, counts, starts = runs(flags, return_inverse, return_counts, boundary=False)
    n_runs = starts.numel()
    out = torch.empty((n_runs, *moved.shape[1:]), dtype=y.dtype, device=x.device)
    _gather_rows_launcher((cdiv(n_runs, BLOCK_M),), y, starts, out, n_runs, row_len, BLOCK_M, BLOCK_K, num_warps=4)
    values = (out.view(torch.bool) if x.dtype == torch.bool else out).movedim(0, dim).contiguous()
    return values, inverse if return_inverse else _unasked(x), counts if return_counts else _unasked(x)


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        return _slice_runs(self, return_inverse, return_counts, dim)
    return unique_runs(self, return_inverse, return_counts)


# --------------------------------------------------------------------------- samples


def run_values(shape, dtype, device, distinct=4):
    """A tensor of ``shape`` whose flattened elements come in runs of 1 to 4 equal values, drawn from
    ``distinct`` values (so that values also recur after other runs)."""
    n = math.prod(shape)
    if dtype == torch.bool:
        pool = torch.tensor([False, True])
    else:
        pool = torch.arange(-(distinct // 2), distinct - distinct // 2).to(dtype)
    lengths = torch.randint(1, 5, (n,))
    picks = torch.randint(0, len(pool), (n,))
    values = torch.repeat_interleave(pool[picks], lengths)[:n]
    return values.reshape(shape).to(device)


def run_slices(n_rows, width, dtype, device):
    """n_rows x width: rows that come in runs of 1 to 4 equal rows, from 4 distinct rows."""
    pool = run_values((4, width), dtype, "cpu", distinct=3)
    lengths = torch.randint(1, 5, (n_rows,))
    return torch.repeat_interleave(pool[torch.randint(0, 4, (n_rows,))], lengths, dim=0)[:n_rows].to(device)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import special_values

    runs_of = lambda *shape: run_values(shape, dtype, device)  # noqa: E731
    long = 2500 if quick else 300007  # more than one block of scan_scatter.BLOCK
    both = {"return_inverse": True, "return_counts": True}
    cases = [
        Sample("contiguous", lambda: (runs_of(97),)),
        Sample("inverse", lambda: (runs_of(97),), {"return_inverse": True}),
        Sample("counts", lambda: (runs_of(97),), {"return_counts": True}),
        Sample("inverse-counts", lambda: (runs_of(97),), both),
        Sample("2d", lambda: (runs_of(13, 17),), both),
        Sample("long", lambda: (runs_of(long),), both),
        Sample("long-one-run", lambda: (torch.ones(long, dtype=dtype, device=device),), both),
        Sample("long-all-distinct", lambda: (torch.arange(long, device=device).to(dtype),), both)
        if dtype in (torch.float32, torch.float64, torch.int32, torch.int64) else None,
        Sample("noncontiguous-transposed", lambda: (runs_of(17, 13).t(),), both),
        Sample("noncontiguous-strided", lambda: (runs_of(9, 22)[:, ::2],), both),
        Sample("0d", lambda: (runs_of(),), both),
        Sample("empty", lambda: (runs_of(0, 5),), both),
        Sample("special", lambda: (torch.repeat_interleave(special_values(dtype, device), 2),), both),
        Sample("dim0", lambda: (run_slices(23, 5, dtype, device),), {"dim": 0, **both}),
        Sample("dim1-3d", lambda: (run_slices(19, 6, dtype, device).t().reshape(2, 3, 19),), {"dim": 2, **both}),
        Sample("dim-negative", lambda: (run_slices(19, 6, dtype, device).reshape(19, 2, 3),), {"dim": -3}),
        Sample("dim-long", lambda: (run_slices(long, 3, dtype, device),), {"dim": 0, **both}),
        Sample("dim-wide", lambda: (run_slices(9, 700, dtype, device),), {"dim": 0, **both}),
        Sample("dim-special", lambda: (special_values(dtype, device)[:, None].repeat(1, 2).repeat_interleave(2, 0),),
               {"dim": 0, **both}),
        Sample("dim-empty-selected", lambda: (runs_of(0, 4),), {"dim": 0, **both}),
        Sample("dim-error-range", lambda: (runs_of(4, 4),), {"dim": 2}),
        Sample("dim-error-0d", lambda: (runs_of(),), {"dim": 0}),
        Sample("dim-error-zero-size", lambda: (runs_of(4, 0),), {"dim": 0}),
    ]
    return [c for c in cases if c is not None]


def _perf_inputs(shape, dtype, device):
    from gems.spec import Sample

    return Sample("perf", (run_values(shape, dtype, "cpu", distinct=64).to(device),),
                  {"return_inverse": True, "return_counts": True})


def _perf_bytes(sample, result):
    x = sample.args[0]
    return 2 * x.numel() * x.element_size() + sum(t.numel() * t.element_size() for t in result)


SPECS = [
    OpSpec(
        name="unique_consecutive", family="compaction",
        impls={"unique_consecutive": unique_consecutive},
        call=torch.unique_consecutive,
        samples=_samples,
        dtypes=ALL,
        tolerance="exact",
        known_failures={("nvidia", str(dtype).removeprefix("torch."), "special"): "H100, 2026-11-23: asked for "
                        "return_counts, CUDA ATen keeps each run's LAST element ([-0.0, -0.0, 0.0, 0.0] gives 0.0; "
                        "without return_counts, and on the CPU, the first: -0.0); gems keeps the first, so a run of "
                        "mixed-sign zeros differs in sign" for dtype in FLOATS},
        perf=PerfSpec(inputs=_perf_inputs, shapes="compaction", bytes=_perf_bytes),
    ),
]
