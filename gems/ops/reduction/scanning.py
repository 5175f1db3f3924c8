"""What the scans (cumsum.py, cummax.py, cummin.py) share: their layout and, for cummax and cummin,
one kernel.

A scan along ``dim`` is run on the (n_outer, n_red, n_inner) view of gems/ops/reduction/planning.py,
the result (same shape as the input) written in the same view: the "rows" tile when the scanned dim
is the closest in memory, the "cols" tile otherwise. A program takes BLOCK_M rows and walks them in
steps of BLOCK_K elements, scanning each step in registers and carrying each row's running result
into the next step: one read and one write of every element, whatever the row length. Block sizes
come from the vendor's heuristics, key "reduction" (a scan row is a reduction row that also writes).

cummax and cummin follow ATen's CPU and CUDA kernels: an element replaces the running extreme when it
is NaN, or when neither is NaN and it is >= (cummax) or <= (cummin) it; so NaN propagates with the
index of the latest NaN, and ties take the latest index.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.reduction.planning import (
    Layout,
    PlanCache,
    config,
    contiguous_strides,
    output_coords,
    plan,
    program_count,
    tile_k,
    wrap_dim,
)
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback

# --------------------------------------------------------------------------- kernels


@triton.jit
def _later_wins(a, ia, b, ib, MAX: tl.constexpr):
    """Combine a running (value, index) ``a`` with a later one ``b``. A negative index marks "nothing
    yet" (the initial carry, lanes past the row's end), which always loses: that keeps the operation
    associative with an identity, as tl.associative_scan needs."""
    if MAX:
        beats = b >= a
    else:
        beats = b <= a
    take_b = (ib >= 0) & ((ia < 0) | (b != b) | ((a == a) & beats))
    return tl.where(take_b, b, a), tl.where(take_b, ib, ia)


@triton.jit
def _cummax_combine(a, ia, b, ib):
    return _later_wins(a, ia, b, ib, True)


@triton.jit
def _cummin_combine(a, ia, b, ib):
    return _later_wins(a, ia, b, ib, False)


@triton.jit
def _cum_extreme_kernel(
    x_ptr, values_ptr, indices_ptr,
    n_rows, n_inner, n_red,
    stride_xo, stride_xk, stride_xn,
    stride_vo, stride_vk, stride_vn,
    stride_io, stride_ik, stride_in,
    MAX: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """values[o, k, n], indices[o, k, n] = the extreme of x[o, :k+1, n] and where it is (see the module
    docstring for NaN and ties), for the BLOCK_M (o, n) rows of this program."""
    pid = tl.program_id(0)
    if INT64:
        pid = pid.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    v_rows = values_ptr + outer * stride_vo + inner * stride_vn
    i_rows = indices_ptr + outer * stride_io + inner * stride_in
    carry = tl.full([BLOCK_M, 1], 0, x_ptr.dtype.element_ty)
    carry_idx = tl.full([BLOCK_M, 1], -1, tl.int64)
    for k in range(0, n_red, BLOCK_K):
        offs_k, mask = tile_k(k, n_red, mask_m, INT64, BLOCK_K)
        x = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0)
        idx = tl.where(mask, offs_k[None, :].to(tl.int64), -1)
        if MAX:
            v, i = tl.associative_scan((x, idx), 1, _cummax_combine)
            v, i = _cummax_combine(carry, carry_idx, v, i)
            last, last_idx = tl.reduce((v, i), 1, _cummax_combine, keep_dims=True)
        else:
            v, i = tl.associative_scan((x, idx), 1, _cummin_combine)
            v, i = _cummin_combine(carry, carry_idx, v, i)
            last, last_idx = tl.reduce((v, i), 1, _cummin_combine, keep_dims=True)
        tl.store(v_rows[:, None] + offs_k[None, :] * stride_vk, v, mask=mask)
        tl.store(i_rows[:, None] + offs_k[None, :] * stride_ik, i, mask=mask)
        carry, carry_idx = last, last_idx


_extreme_launcher = Launcher(_cum_extreme_kernel)

# --------------------------------------------------------------------------- plans


def scan_layout(shape, dim, strides) -> tuple[Layout, bool]:
    """(layout, copy) of a scan along ``dim`` over tensors of ``shape`` with these strides (inputs
    first, then the results); copy: no view merges that way, so the inputs are to be copied contiguous
    first and the results are fresh contiguous tensors."""
    reduced = (dim,) if len(shape) else ()
    layout = plan(shape, reduced, strides)
    if layout is not None:
        return layout, False
    return plan(shape, reduced, [contiguous_strides(shape)] * len(strides)), True


class ExtremePlan(NamedTuple):
    copy: bool
    grid: tuple
    args: tuple
    num_warps: int


def _extreme_plan(x, dim, is_max) -> ExtremePlan:
    if x.dtype not in ALL:
        raise Fallback(f"cummax/cummin of {x.dtype} is not handled by gems")
    dim = wrap_dim(dim, x.dim())
    out = contiguous_strides(x.shape)
    layout, copy = scan_layout(x.shape, dim, [x.stride(), out, out])
    cfg = config("reduction", layout)
    args = (layout.n_rows, layout.n_inner, layout.n_red, *(s for per in layout.strides for s in per),
            is_max, layout.cols, layout.needs_int64(), cfg["BLOCK_M"], cfg["BLOCK_K"])
    return ExtremePlan(copy, (program_count(layout, cfg["BLOCK_M"]),), args, cfg["num_warps"])


_extreme_plans = PlanCache()


def cumulative_extreme(x: torch.Tensor, dim: int, is_max: bool):
    """(values, indices) of cummax (is_max) or cummin of ``x`` along ``dim``."""
    key = (x.shape, x.stride(), x.dtype, dim, is_max)
    p = _extreme_plans.get(key) or _extreme_plans.put(key, _extreme_plan(x, dim, is_max))
    values = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    indices = torch.empty(x.shape, dtype=torch.int64, device=x.device)
    if x.numel() == 0:
        return values, indices
    if p.copy:
        x = x.contiguous()
    if x.dtype == torch.bool:  # compared as 0/1 bytes: the same order, and no int1 arithmetic
        x, values_view = x.view(torch.uint8), values.view(torch.uint8)
    else:
        values_view = values
    _extreme_launcher(p.grid, x, values_view, indices, *p.args, num_warps=p.num_warps)
    return values, indices
