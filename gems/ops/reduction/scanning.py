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

import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL, LOW_PRECISION_FLOATS
from gems.ops.reduction.planning import (
    TL_DTYPES,
    Layout,
    PlanCache,
    config,
    contiguous_strides,
    output_coords,
    plan,
    program_count,
    reduce_max,
    reduce_sum,
    tile_k,
    wrap_dim,
)
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback

# cummax/cummin scan a step of PAIR_BLOCK_K elements by comparing every pair in it ([BLOCK_M, K, K]
# tiles, reduced along the last axis): tl.associative_scan over a (value, index) tuple needs a Python
# combine function that the interpreter calls element by element (about 2 ms each, minutes for the
# conformance samples), where these reductions are one numpy call. K work per element instead of
# log K; the tile stays within PAIR_TILE elements (16 fp32 + 16 int64 values per thread at 4 warps).
PAIR_BLOCK_K = 16
PAIR_TILE = 4096
PAIR_WARPS = 4

# --------------------------------------------------------------------------- kernels


@triton.jit
def _step_extremes(x, valid, offs_k, fill, MAX: tl.constexpr):
    """(values, indices) of the inclusive running extreme along axis 1 of a [BLOCK_M, K] step; indices
    are the lanes' offs_k (-1 where nothing valid came yet). For lane j over the valid lanes i <= j: the
    latest NaN if there is one, else the extreme value and the latest lane that holds it. fill: a value
    no element beats (the dtype's lowest for MAX, highest otherwise)."""
    xi = x[:, None, :]  # [M, 1, K]: the lanes i compared ...
    ii = offs_k[None, None, :]
    seen = (ii <= offs_k[None, :, None]) & valid[:, None, :]  # ... with each lane j (axis 1)
    nan_idx = reduce_max(tl.where(seen & (xi != xi), ii, -1), 2)
    clean = seen & (xi == xi)
    if MAX:
        best = reduce_max(tl.where(clean, xi, fill), 2)
    else:
        best = _reduce_min(tl.where(clean, xi, fill), 2)
    best_idx = reduce_max(tl.where(clean & (xi == best[:, :, None]), ii, -1), 2)
    idx = tl.where(nan_idx >= 0, nan_idx, best_idx)
    # The value is read back from its lane: of equal values (0.0 and -0.0) the latest one's.
    return _pick(xi, ii == idx[:, :, None], 2), idx


@triton.jit
def _reduce_min(x, axis: tl.constexpr):
    # planning.py has reduce_sum and reduce_max (builtins only, see there); the min is the same idea.
    return tl.reduce(x, axis, tl.standard._elementwise_min)


@triton.jit
def _later_wins(a, ia, b, ib, MAX: tl.constexpr):
    """Combine a running (value, index) ``a`` with a later one ``b``. A negative index marks "nothing
    yet" (the initial carry, lanes before a row's first element), which always loses."""
    if MAX:
        beats = b >= a
    else:
        beats = b <= a
    take_b = (ib >= 0) & ((ia < 0) | (b != b) | ((a == a) & beats))
    return tl.where(take_b, b, a), tl.where(take_b, ib, ia)


@triton.jit
def _pick(v, sel, axis: tl.constexpr):
    """The one element along ``axis`` of ``v`` where ``sel`` holds (0 where none does), bit for bit:
    a sum of it and zeros, over the integer bits of floats so that -0.0 and NaN pass unchanged."""
    if v.dtype.is_floating():
        bits = v.to(tl.int64 if v.dtype.primitive_bitwidth == 64 else tl.int32, bitcast=True)
        return reduce_sum(tl.where(sel, bits, 0), axis).to(v.dtype, bitcast=True)
    else:
        return reduce_sum(tl.where(sel, v, 0), axis)


@triton.jit
def _cum_extreme_kernel(
    x_ptr, values_ptr, indices_ptr,
    n_rows, n_inner, n_red, fill,
    stride_xo, stride_xk, stride_xn,
    stride_vo, stride_vk, stride_vn,
    stride_io, stride_ik, stride_in,
    COMPUTE: tl.constexpr, MAX: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """values[o, k, n], indices[o, k, n] = the extreme of x[o, :k+1, n] and where it is (see the module
    docstring for NaN and ties), for the BLOCK_M (o, n) rows of this program. Values are compared in
    COMPUTE: fp16/bf16 as fp32 (exact both ways; the interpreter holds bf16 as raw bits)."""
    pid = tl.program_id(0)
    if INT64:
        pid = pid.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    v_rows = values_ptr + outer * stride_vo + inner * stride_vn
    i_rows = indices_ptr + outer * stride_io + inner * stride_in
    carry = tl.full([BLOCK_M, 1], 0, COMPUTE)
    carry_idx = tl.full([BLOCK_M, 1], -1, tl.int64)
    for k in range(0, n_red, BLOCK_K):
        offs_k, mask = tile_k(k, n_red, mask_m, INT64, BLOCK_K)
        x = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0).to(COMPUTE)
        v, i = _step_extremes(x, mask, offs_k.to(tl.int64), fill, MAX)
        v, i = _later_wins(carry, carry_idx, v, i, MAX)
        tl.store(v_rows[:, None] + offs_k[None, :] * stride_vk, v.to(values_ptr.dtype.element_ty), mask=mask)
        tl.store(i_rows[:, None] + offs_k[None, :] * stride_ik, i, mask=mask)
        # Lanes past the row's end never win, so the last lane holds the row's running result.
        last = offs_k[None, :] == k + BLOCK_K - 1
        carry, carry_idx = _pick(v, last, 1)[:, None], _pick(i, last, 1)[:, None]


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
    if x.numel() == 0:  # nothing to launch (and the vendor's block-size rules may divide by a zero length)
        return ExtremePlan(False, (0,), (), PAIR_WARPS)
    out = contiguous_strides(x.shape)
    layout, copy = scan_layout(x.shape, dim, [x.stride(), out, out])
    cfg = config("reduction", layout)
    block_m = max(1, min(cfg["BLOCK_M"], PAIR_TILE // PAIR_BLOCK_K**2))
    stored = torch.uint8 if x.dtype == torch.bool else x.dtype  # bool: its 0/1 bytes (see cumulative_extreme)
    compute = tl.float32 if x.dtype in LOW_PRECISION_FLOATS else TL_DTYPES[stored]
    if stored.is_floating_point:
        fill = -math.inf if is_max else math.inf
    else:
        info = torch.iinfo(stored)
        fill = info.min if is_max else info.max
    args = (layout.n_rows, layout.n_inner, layout.n_red, fill, *(s for per in layout.strides for s in per),
            compute, is_max, layout.cols, layout.needs_int64(), block_m, PAIR_BLOCK_K)
    return ExtremePlan(copy, (program_count(layout, block_m),), args, PAIR_WARPS)


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
