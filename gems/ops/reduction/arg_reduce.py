"""Value-and-index reductions (argmax, argmin, max.dim, min.dim): the first position of the maximum or
minimum along one dim, and the value there. As in ATen, NaN is larger and smaller than every number, so
the first NaN wins; among equal values (-0.0 and +0.0 are equal) the first wins.

The input is viewed as (n_outer, n_red, n_inner) by planning.py. Each tile lane keeps a running max (min)
that propagates NaN (one instruction per element) and the loop step where it last changed, so it holds
its first best; lanes are combined once per program. There, each lane's (value, position) becomes one
int64, the value's order key (planning.order_key: NaN above or below everything) in the high half and the
position, complemented for a max, in the low half, so a single integer max (min) gives the best value
and its first position. fp64 and int64 values need the whole 64 bits: they take a max of the keys, then
the smallest position holding it. The value is read back from the input at that position (its exact
bits: -0.0 stays -0.0). A split that fits one tile has no running state: its best value comes from
halve_extreme and one order-key reduction, its position from a min over the positions holding it
(_first_of_tile). As in the sum, the vendor's ``SPLITS`` rule may divide a long reduction between
programs; the second pass reduces their (value, index) partials, whose positions are in split order.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.ops.reduction.planning import (
    TL_DTYPES,
    Launch,
    PlanCache,
    check_nonempty,
    check_reduction_out,
    config,
    from_order_key,
    halve_extreme,
    halves,
    order_key,
    output_coords,
    plan_or_permute,
    program_count,
    reduce_max,
    reduce_min,
    reduced_shape,
    result_strides,
    split_count,
    split_layout,
    tile_k,
    wrap_dim,
)
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback

# A split of more elements than this cannot keep its positions in the low 32 bits of the packed finish.
_PACK_LIMIT = 2**31 - 1
# Warps for an fp16/bf16 split that fits one tile in the rows layout (at most; the vendor's plan may give
# fewer). On an H100 (median of 3 interleaved reps, argmax over the last dim of 32768x4096, % of a copy's
# bandwidth), 4 warps against the vendor's 8: bf16 90.8% (90.5-90.9) against 87.9%, fp16 91.5% against 90.2%;
# 16 warps 70-71%. fp32 rows are at 99% with 8 warps and keep the vendor's plan.
_HALF_ROW_WARPS = 4


@triton.jit
def _best_first(best, pos, n, IS_MAX: tl.constexpr, PACK: tl.constexpr):
    """The first position of the best value in each tile row, from each lane's (best value, its position);
    ``n`` exceeds every position."""
    if best.dtype.is_floating():
        key = order_key(best + 0, IS_MAX)  # + 0 turns -0.0 into +0.0: equal values tie on the position
    else:
        key = best
    if PACK:
        if IS_MAX:  # the largest complement is the smallest position
            packed = (key.to(tl.int64) << 32) | (0xFFFFFFFF - pos.to(tl.int64))
            first = 0xFFFFFFFF - (reduce_max(packed, 1) & 0xFFFFFFFF)
        else:
            packed = (key.to(tl.int64) << 32) | pos.to(tl.int64)
            first = reduce_min(packed, 1) & 0xFFFFFFFF
    else:
        if IS_MAX:
            top = reduce_max(key, 1)
        else:
            top = reduce_min(key, 1)
        first = reduce_min(tl.where(key == top[:, None], pos, n), 1)
    return first


@triton.jit
def _first_of_tile(v, pos, n, IS_MAX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                   HALVES: tl.constexpr):
    """The first position of the best value in each row of the tile v (positions ``pos``, masked lanes at
    positions >= n holding the worst value). Floats: the best of each 2**HALVES adjacent elements
    (halve_extreme), one order-key reduction of those, then the first position holding the best or, when it
    is NaN, a NaN. On an H100 at 32768x4096 fp16/bf16: 88-90% of the copy bandwidth against 69-71% for the
    packed finish (tools/gpu_redperf_variants.py mode "halve", in git history at ca8e18b); a tl.reduce with
    a NaN-propagating combine gave 90-92% but runs one Python call per element under the interpreter."""
    if v.dtype.is_floating():
        h = halve_extreme(v, IS_MAX, BLOCK_M, BLOCK_K, HALVES)
        if IS_MAX:
            best = from_order_key(reduce_max(order_key(h, True), 1))
        else:
            best = from_order_key(reduce_min(order_key(h, False), 1))
        hit = (v == best[:, None]) | (v != v)  # -0.0 == +0.0: equal values tie on the position
    else:
        if IS_MAX:
            best = reduce_max(v, 1)
        else:
            best = reduce_min(v, 1)
        hit = v == best[:, None]
    return reduce_min(tl.where(hit, pos, n), 1)


@triton.jit
def _arg_kernel(
    x_ptr, idx_in_ptr, val_ptr, idx_ptr,
    n_rows, n_inner, n_red, red_per_split, ident,
    stride_xo, stride_xn, stride_xk,
    stride_oo, stride_on, stride_os,
    IS_MAX: tl.constexpr, HAS_IDX_IN: tl.constexpr, WRITE_VAL: tl.constexpr,
    VAL: tl.constexpr, PACK: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, ONE_STEP: tl.constexpr, HALVES: tl.constexpr,
):
    """(val, idx)[o, n] (+ split * stride_os) = best (value, first index) over this split's k of x[o, k, n].

    VAL: the dtype values are compared in (fp32 for fp16/bf16/fp32, int32 for narrower integers and bool);
    ident: the worst VAL (-inf for a max). HAS_IDX_IN: x holds partial results whose indices are in idx_in
    (same strides), not k. PACK: the one-reduction finish (32-bit values, positions below 2**31).
    ONE_STEP: every split is at most BLOCK_K long, so the tile is reduced as loaded (the running best and
    its position per lane double the registers: 63 against 31 per thread on sm_90 at 4096 fp16 per row);
    HALVES: min(3, log2(BLOCK_K)), see _first_of_tile.
    """
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    k_start = split * red_per_split
    n = tl.minimum(k_start + red_per_split, n_red) - k_start
    rows = outer * stride_xo + inner * stride_xn + k_start * stride_xk
    x_rows = x_ptr + rows
    if ONE_STEP:  # the split fits one tile: its elements are the lanes' bests, no running state
        offs_k, mask = tile_k(0, n, mask_m, INT64, BLOCK_K)
        v = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0).to(VAL)
        first = _first_of_tile(tl.where(mask, v, ident), offs_k[None, :], n, IS_MAX, BLOCK_M, BLOCK_K, HALVES)
    else:
        best = tl.full([BLOCK_M, BLOCK_K], 0, VAL) + ident
        best_k = tl.full([BLOCK_M, BLOCK_K], 0, tl.int64 if INT64 else tl.int32)
        for k in range(0, n, BLOCK_K):
            offs_k, mask = tile_k(k, n, mask_m, INT64, BLOCK_K)
            v = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0).to(VAL)
            v = tl.where(mask, v, ident)
            if IS_MAX:
                new = tl.maximum(best, v, propagate_nan=tl.PropagateNan.ALL)
            else:
                new = tl.minimum(best, v, propagate_nan=tl.PropagateNan.ALL)
            if VAL.is_floating():  # strictly better, or the lane's first NaN (a NaN best never changes)
                changed = (new != best) & (best == best)
            else:
                changed = new != best
            best_k = tl.where(changed, k, best_k)
            best = new
        first = _best_first(best, best_k + tl.arange(0, BLOCK_K)[None, :], n, IS_MAX, PACK)
    if HAS_IDX_IN:
        idx = tl.load(idx_in_ptr + rows + first * stride_xk, mask=mask_m, other=0)
    else:
        idx = k_start + first
    out = outer * stride_oo + inner * stride_on + split * stride_os
    tl.store(idx_ptr + out, idx.to(tl.int64), mask=mask_m)
    if WRITE_VAL:
        val = tl.load(x_rows + first * stride_xk, mask=mask_m, other=0)
        tl.store(val_ptr + out, val.to(val_ptr.dtype.element_ty), mask=mask_m)


_launcher = Launcher(_arg_kernel)


class _Plan(NamedTuple):
    order: list | None  # when set, the input is first copied contiguous in this dim order
    launches: tuple  # one launch, or the first pass and the second over the partials
    partial: tuple | None  # shape of the partial buffers (values in the input's dtype) of a split reduction


def _value_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype a kernel compares ``dtype`` values in (the kernel's VAL)."""
    if dtype.is_floating_point:
        return torch.float64 if dtype == torch.float64 else torch.float32
    return torch.int64 if dtype == torch.int64 else torch.int32


def _launches(layout, is_max, val, want_values, itemsize, has_idx_in=False, allow_split=True):
    """itemsize: the input's element size (the tile's layout follows its loads)."""
    cfg = config("reduction", layout)
    block_m, block_k, warps = cfg["BLOCK_M"], cfg["BLOCK_K"], cfg["num_warps"]
    (sxo, sxk, sxn), (soo, _, son) = layout.strides
    splits, per_split = split_count(cfg, layout.n_red) if allow_split else (1, max(layout.n_red, 1))
    if val.is_floating_point:
        ident = -math.inf if is_max else math.inf
    else:
        ident = torch.iinfo(val).min if is_max else torch.iinfo(val).max
    pack = val.itemsize == 4 and per_split + block_k <= _PACK_LIMIT

    def launch(lay, grid_splits, per, out_strides, write_val, extra):
        xo, xk, xn = lay.strides[0]
        one_step = per <= block_k
        half_row = one_step and not lay.cols and val.is_floating_point and itemsize == 2  # fp16/bf16 loads
        n_warps = min(warps, _HALF_ROW_WARPS) if half_row else warps
        args = (lay.n_rows, lay.n_inner, lay.n_red, per, ident, xo, xn, xk, *out_strides, is_max, has_idx_in,
                write_val, TL_DTYPES[val], pack, lay.cols, lay.needs_int64(extra), block_m, block_k,
                one_step, halves(lay, block_k, itemsize))
        return Launch((program_count(lay, block_m), grid_splits), args, n_warps)

    if splits <= 1:
        return (launch(layout, 1, per_split, (soo, son, 0), want_values, 0),), None
    first = launch(layout, splits, per_split, (layout.n_inner, 1, layout.n_rows), True, splits * layout.n_rows)
    (second,), _ = _launches(split_layout(layout, splits, (soo, son)), is_max, val, want_values, itemsize, True,
                             allow_split=False)
    return (first, second), (splits, layout.n_rows)


_plans = PlanCache()


def _plan(x, reduced, keepdim, out, is_max, want_values):
    full = result_strides(x.dim(), reduced, keepdim, out.stride())
    order, layout = plan_or_permute(x.shape, reduced, (x.stride(), full))
    if layout is None:
        return None
    launches, partial = _launches(layout, is_max, _value_dtype(x.dtype), want_values, x.element_size())
    return _Plan(order, launches, partial)


def _run(p, x, values, indices):
    if p.order is not None:
        x = x.permute(p.order).contiguous()
    if p.partial is None:
        (launch,) = p.launches
        _launcher(launch.grid, x, indices, values, indices, *launch.args, num_warps=launch.num_warps)
        return
    part_v = torch.empty(p.partial, dtype=x.dtype, device=x.device)
    part_i = torch.empty(p.partial, dtype=torch.int64, device=x.device)
    first, second = p.launches
    _launcher(first.grid, x, part_i, part_v, part_i, *first.args, num_warps=first.num_warps)
    _launcher(second.grid, part_v, part_i, values, indices, *second.args, num_warps=second.num_warps)


def arg_reduce(x, dim, keepdim, is_max, name, want_values=True, values=None, indices=None):
    """(values, indices) of the max (is_max) or min of x along ``dim`` (None: over the flattened tensor);
    values is None unless ``want_values``. values/indices: ``out=`` tensors."""
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"{name} of {x.dtype} is not handled by gems")
    if indices is not None and indices.dtype != torch.int64:
        raise RuntimeError(f"Expected out tensor to have dtype long int, but got {indices.dtype} instead")
    if values is not None and values.dtype != x.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {x.dtype}, but got {values.dtype} instead")
    check_nonempty(x, dim, name, IndexError if not want_values else RuntimeError)
    if dim is None:  # positions in the flattened tensor
        shape = [1] * x.dim() if keepdim else []
        x, dim, keepdim = x.reshape(-1), 0, False
    else:
        dim = wrap_dim(dim, x.dim())
        shape = reduced_shape(x.shape, (dim,), keepdim)
    reduced = (dim,) if x.dim() else ()
    fresh = lambda dtype: torch.empty(shape, dtype=dtype, device=x.device)
    for out in (values, indices):
        if out is not None:
            check_reduction_out(out, x.device, shape)
    given = [o for o in (values, indices) if o is not None]
    if any(o.stride() != given[0].stride() for o in given):  # out= tensors of two layouts: compute, then copy
        v, i = arg_reduce(x, dim, keepdim, is_max, name, want_values)
        return (values.copy_(v) if values is not None else None), indices.copy_(i)
    out_i = indices if indices is not None else fresh(torch.int64)
    out_v = values if values is not None else fresh(x.dtype) if want_values else out_i
    if out_i.numel():
        view_shape = reduced_shape(x.shape, reduced, keepdim)  # the shape once x is flattened (dim None)
        target = out_i.view(view_shape)
        key = (x.shape, x.stride(), x.dtype, reduced, keepdim, is_max, want_values, target.stride())
        p = _plans.get(key) or _plans.put(key, _plan(x, reduced, keepdim, target, is_max, want_values))
        if p is None:
            v, i = arg_reduce(x, dim, keepdim, is_max, name, want_values)
            return (out_v.copy_(v) if want_values else None), out_i.copy_(i)
        _run(p, x, out_v.view(view_shape) if want_values else target, target)
    return (out_v if want_values else None), out_i
