"""Value-and-index reductions (argmax, argmin, max.dim, min.dim): the first position of the maximum or
minimum along one dim, and the value there. As in ATen, NaN is larger and smaller than every number, so
the first NaN wins; among equal values the first wins.

The input is viewed as (n_outer, n_red, n_inner) by planning.py. Each tile element keeps its own best
(value, index) across the loop over K, taking an element only when strictly better, so each keeps its
first best; the tile is then combined with builtin max/min reductions only (the first NaN's index,
else the maximum and the smallest index holding it), which run as single numpy calls under the
interpreter and give the same answer on the GPU. As in the sum, the vendor's ``SPLITS`` rule may divide
a long reduction between programs; the second pass reduces their (value, index) partials in order.
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

# An index no element has: marks tile lanes that have seen no element yet.
_NO_INDEX = 2**62


@triton.jit
def _arg_kernel(
    x_ptr, idx_in_ptr, val_ptr, idx_ptr,
    n_rows, n_inner, n_red, red_per_split, ident,
    stride_xo, stride_xn, stride_xk,
    stride_oo, stride_on, stride_os,
    IS_MAX: tl.constexpr, HAS_IDX_IN: tl.constexpr, WRITE_VAL: tl.constexpr,
    ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """(val, idx)[o, n] (+ split * stride_os) = best (value, first index) over this split's k of x[o, k, n].

    HAS_IDX_IN: x holds partial results whose indices are in idx_in (same strides), not k.
    """
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    rows = outer * stride_xo + inner * stride_xn
    k_start = split * red_per_split
    k_end = tl.minimum(k_start + red_per_split, n_red)
    none = 4611686018427387904  # _NO_INDEX (2**63 - 1 loses bits through the interpreter's float casts)
    best = tl.full([BLOCK_M, BLOCK_K], 0, ACC) + ident
    best_i = tl.full([BLOCK_M, BLOCK_K], none, tl.int64)
    for k in range(k_start, k_end, BLOCK_K):
        offs_k, mask = tile_k(k, k_end, mask_m, INT64, BLOCK_K)
        offs = rows[:, None] + offs_k[None, :] * stride_xk
        v = tl.load(x_ptr + offs, mask=mask, other=0).to(ACC)
        if HAS_IDX_IN:
            i = tl.load(idx_in_ptr + offs, mask=mask, other=0)
        else:
            i = tl.full([BLOCK_M, BLOCK_K], 0, tl.int64) + offs_k[None, :]
        if IS_MAX:
            better = v > best
        else:
            better = v < best
        take = mask & ((best_i == none) | better | ((v != v) & (best == best)))
        best = tl.where(take, v, best)
        best_i = tl.where(take, i, best_i)
    is_nan = best != best
    has_nan = reduce_max(is_nan.to(tl.int32), 1)
    nan_i = reduce_min(tl.where(is_nan, best_i, none), 1)
    clean = tl.where(is_nan, ident, best)
    if IS_MAX:
        top = reduce_max(clean, 1)
    else:
        top = reduce_min(clean, 1)
    top_i = reduce_min(tl.where(clean == top[:, None], best_i, none), 1)
    out = outer * stride_oo + inner * stride_on + split * stride_os
    tl.store(idx_ptr + out, tl.where(has_nan > 0, nan_i, top_i), mask=mask_m)
    if WRITE_VAL:
        if ACC.is_floating():
            top = tl.where(has_nan > 0, float("nan"), top)
        if val_ptr.dtype.element_ty == tl.int1:
            top = top != 0
        tl.store(val_ptr + out, top.to(val_ptr.dtype.element_ty), mask=mask_m)


_launcher = Launcher(_arg_kernel)


class _Plan(NamedTuple):
    order: list | None  # when set, the input is first copied contiguous in this dim order
    launches: tuple  # one launch, or the first pass and the second over the partials
    partial: tuple | None  # (shape, value dtype) of the partial buffers of a split reduction


def _launches(layout, is_max, acc, want_values, has_idx_in=False, allow_split=True):
    cfg = config("reduction", layout)
    block_m, block_k, warps = cfg["BLOCK_M"], cfg["BLOCK_K"], cfg["num_warps"]
    (sxo, sxk, sxn), (soo, _, son) = layout.strides
    splits, per_split = split_count(cfg, layout.n_red) if allow_split else (1, max(layout.n_red, 1))
    if acc.is_floating_point:
        ident = -math.inf if is_max else math.inf
    else:
        ident = torch.iinfo(acc).min if is_max else torch.iinfo(acc).max
    tl_acc = TL_DTYPES[acc]

    def launch(lay, grid_splits, per, out_strides, write_val, extra):
        xo, xk, xn = lay.strides[0]
        args = (lay.n_rows, lay.n_inner, lay.n_red, per, ident, xo, xn, xk, *out_strides, is_max, has_idx_in,
                write_val, tl_acc, lay.cols, lay.needs_int64(extra), block_m, block_k)
        return Launch((program_count(lay, block_m), grid_splits), args, warps)

    if splits <= 1:
        return (launch(layout, 1, per_split, (soo, son, 0), want_values, 0),), None
    first = launch(layout, splits, per_split, (layout.n_inner, 1, layout.n_rows), True, splits * layout.n_rows)
    (second,), _ = _launches(split_layout(layout, splits, (soo, son)), is_max, acc, want_values, True,
                             allow_split=False)
    return (first, second), ((splits, layout.n_rows), acc)


_plans = PlanCache()


def _plan(x, reduced, keepdim, out, is_max, want_values):
    full = result_strides(x.dim(), reduced, keepdim, out.stride())
    order, layout = plan_or_permute(x.shape, reduced, (x.stride(), full))
    if layout is None:
        return None
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32 if x.dtype.is_floating_point else torch.int64
    launches, partial = _launches(layout, is_max, acc, want_values)
    return _Plan(order, launches, partial)


def _run(p, x, values, indices):
    if p.order is not None:
        x = x.permute(p.order).contiguous()
    if p.partial is None:
        (launch,) = p.launches
        _launcher(launch.grid, x, indices, values, indices, *launch.args, num_warps=launch.num_warps)
        return
    part_v = torch.empty(p.partial[0], dtype=p.partial[1], device=x.device)
    part_i = torch.empty(p.partial[0], dtype=torch.int64, device=x.device)
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
