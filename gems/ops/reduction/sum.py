"""sum: full and per-dimension sums (``sum``, ``sum.dim_IntList`` and their ``out=`` forms).

The input is viewed as (n_outer, n_red, n_inner) by gems/ops/reduction/planning.py. When the outputs
give too few programs to fill the device (a full reduction, a long reduced dim), the vendor's
``SPLITS`` rule divides the reduced range between programs; each writes a partial result in the
accumulation dtype and a second launch of the same kernel adds them. Inputs whose dims cannot be
merged that way (non-adjacent reduced dims of a permuted tensor) are first copied to a contiguous
(kept..., reduced...) order. Block sizes come from the vendor's heuristics, key "reduction".

Numerics follow ATen: each element is first converted to the result dtype (``dtype=`` or ``out``),
then accumulated in fp32 (fp16, bf16, fp32), fp64, or int64 (integers and bool: results wrap like
ATen's); integer and bool inputs give int64 unless a dtype is asked for.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.reduction.planning import (
    TL_DTYPES,
    Launch,
    Layout,
    PlanCache,
    accumulation_dtype,
    check_reduction_out,
    config,
    contiguous_strides,
    output_coords,
    plan,
    program_count,
    reduce_sum,
    reduced_dims,
    reduced_shape,
    tile_k,
)
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec
from gems.testing.samples_reduction import reduction_perf, reduction_samples


@triton.jit
def _convert(x, CAST: tl.constexpr, ACC: tl.constexpr):
    """An input element as ATen sees it: converted to the result dtype, then widened to the accumulator."""
    if CAST == tl.int1:
        return (x != 0).to(ACC)  # to bool means "is nonzero", not a truncation
    else:
        return x.to(CAST).to(ACC)


@triton.jit
def _sum_kernel(
    x_ptr, out_ptr,
    n_rows, n_inner, n_red, red_per_split,
    stride_xo, stride_xn, stride_xk,
    stride_oo, stride_on, stride_os,
    CAST: tl.constexpr, ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """out[o, n] (+ split * stride_os) = sum over k in this split's range of x[o, k, n].

    Grid: (programs over the outputs, splits of the reduced range). Each tile element keeps its own
    running sum across steps; the tile is summed across K once at the end.
    """
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    k_start = split * red_per_split
    k_end = tl.minimum(k_start + red_per_split, n_red)
    acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
    for k in range(k_start, k_end, BLOCK_K):
        offs_k, mask = tile_k(k, k_end, mask_m, INT64, BLOCK_K)
        x = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0)
        acc += _convert(x, CAST, ACC)
    total = reduce_sum(acc, 1)
    if out_ptr.dtype.element_ty == tl.int1:
        total = total != 0
    out = out_ptr + outer * stride_oo + inner * stride_on + split * stride_os
    tl.store(out, total.to(out_ptr.dtype.element_ty), mask=mask_m)


_sum_launcher = Launcher(_sum_kernel)


class SumPlan(NamedTuple):
    shape: list  # the result's shape
    dtype: torch.dtype  # the result's dtype
    order: list | None  # when set, the input is first copied contiguous in this dim order
    launches: tuple  # no launch (empty result), one, or two around a partial buffer
    partial: tuple | None  # (shape, dtype) of the partial results of a split reduction


def _sum_launches(layout: Layout, cast, acc_dtype, allow_split=True):
    """(launches, partial buffer) for a sum over ``layout`` (see the module docstring)."""
    cfg = config("reduction", layout)
    block_m, block_k, warps = cfg["BLOCK_M"], cfg["BLOCK_K"], cfg["num_warps"]
    (sxo, sxk, sxn), (soo, _, son) = layout.strides
    acc = TL_DTYPES[acc_dtype]
    n_rows, n_inner, n_red = layout.n_rows, layout.n_inner, layout.n_red
    programs = program_count(layout, block_m)
    splits = cfg.get("SPLITS", 1) if allow_split else 1
    if splits > 1:
        per_split = cdiv(cdiv(n_red, splits), block_k) * block_k
        splits = cdiv(n_red, per_split)
    if splits <= 1:
        args = (n_rows, n_inner, n_red, max(n_red, 1), sxo, sxn, sxk, soo, son, 0,
                cast, acc, layout.cols, layout.needs_int64(), block_m, block_k)
        return (Launch((programs, 1), args, warps),), None
    # Pass 1 writes partial[s, o, n] for each split s; pass 2 reduces partial over s into the result.
    args = (n_rows, n_inner, n_red, per_split, sxo, sxn, sxk, n_inner, 1, n_rows,
            cast, acc, layout.cols, layout.needs_int64(splits * n_rows), block_m, block_k)
    if n_rows == 1:
        second = Layout(False, 1, splits, 1, ((0, 1, 0), (0, 0, 0)))
    elif n_inner == 1:
        second = Layout(True, 1, splits, n_rows, ((0, n_rows, 1), (0, 0, soo)))
    else:
        second = Layout(True, layout.n_outer, splits, n_inner, ((n_inner, n_rows, 1), (soo, 0, son)))
    (final,), _ = _sum_launches(second, acc, acc_dtype, allow_split=False)
    return (Launch((programs, splits), args, warps), final), ((splits, n_rows), acc_dtype)


def _sum_plan(x, dim, keepdim, dtype, out) -> SumPlan | None:
    """Check the arguments as ATen does and plan the launches; None for an ``out`` whose strides merge
    in no order (the caller then computes into a fresh tensor and copies)."""
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"sum of {x.dtype} is not handled by gems")
    if dtype is not None and out is not None and out.dtype != dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
    result_dtype = dtype or (out.dtype if out is not None else
                             x.dtype if x.dtype.is_floating_point else torch.int64)
    if result_dtype not in TL_DTYPES:
        raise Fallback(f"sum to {result_dtype} is not handled by gems")
    reduced = reduced_dims(x, dim)
    shape = reduced_shape(x.shape, reduced, keepdim)
    if out is not None:
        check_reduction_out(out, x.device, shape)
    if math.prod(shape) == 0:
        return SumPlan(shape, result_dtype, None, (), None)
    # The result's strides as a full-rank tensor: 0 along the reduced dims.
    out_strides = iter(out.stride() if out is not None else contiguous_strides(shape))
    if keepdim:
        full = tuple(0 if d in reduced else s for d, s in enumerate(out_strides))
    else:
        full = tuple(0 if d in reduced else next(out_strides) for d in range(x.dim()))
    order = None
    layout = plan(x.shape, reduced, (x.stride(), full))
    if layout is None:
        # Reduced dims that do not merge: copy to (kept..., reduced...) order, where they do.
        order = [d for d in range(x.dim()) if d not in reduced] + list(reduced)
        copied = [x.shape[d] for d in order]
        layout = plan(copied, range(len(copied) - len(reduced), len(copied)),
                      (contiguous_strides(copied), tuple(full[d] for d in order)))
        if layout is None:
            return None
    launches, partial = _sum_launches(layout, TL_DTYPES[result_dtype], accumulation_dtype(result_dtype))
    return SumPlan(shape, result_dtype, order, launches, partial)


def _run_sum(p: SumPlan, x, out):
    if p.order is not None:
        x = x.permute(p.order).contiguous()
    if p.partial is None:
        for launch in p.launches:
            _sum_launcher(launch.grid, x, out, *launch.args, num_warps=launch.num_warps)
        return out
    partial = torch.empty(p.partial[0], dtype=p.partial[1], device=x.device)
    first, second = p.launches
    _sum_launcher(first.grid, x, partial, *first.args, num_warps=first.num_warps)
    _sum_launcher(second.grid, partial, out, *second.args, num_warps=second.num_warps)
    return out


_sum_plans = PlanCache()


def _sum(x: torch.Tensor, dim, keepdim: bool, dtype, out):
    if out is None:
        key = (x.shape, x.stride(), x.dtype, dim if dim is None or type(dim) is int else tuple(dim), keepdim,
               dtype)
        p = _sum_plans.get(key) or _sum_plans.put(key, _sum_plan(x, dim, keepdim, dtype, None))
        return _run_sum(p, x, torch.empty(p.shape, dtype=p.dtype, device=x.device))
    p = _sum_plan(x, dim, keepdim, dtype, out)
    if p is None:  # an out= tensor whose strides merge in no order: compute, then copy
        return out.copy_(_sum(x, dim, keepdim, out.dtype, None))
    return _run_sum(p, x, out)


# --------------------------------------------------------------------------- ATen overloads


def sum_all(self, *, dtype=None):
    return _sum(self, None, False, dtype, None)


def sum_dim(self, dim, keepdim=False, *, dtype=None):
    return _sum(self, dim, keepdim, dtype, None)


def sum_all_out(self, *, dtype=None, out):
    return _sum(self, None, False, dtype, out)


def sum_dim_out(self, dim, keepdim=False, *, dtype=None, out):
    return _sum(self, dim, keepdim, dtype, out)


def _sum_result_dtype(dtype: torch.dtype) -> torch.dtype:
    return dtype if dtype.is_floating_point else torch.int64


SPECS = [
    OpSpec(
        name="sum", family="reduction",
        impls={"sum": sum_all, "sum.dim_IntList": sum_dim, "sum.out": sum_all_out, "sum.IntList_out": sum_dim_out},
        call=torch.sum,
        samples=reduction_samples(torch.sum, full="sum", dim="sum.dim_IntList", out="sum.IntList_out",
                                  full_out=("sum.out", torch.ops.aten.sum.out), result_dtype=_sum_result_dtype,
                                  dtype_arg=True, grad=True),
        dtypes=ALL,
        tolerance="reduction",
        perf=reduction_perf("reduction"),
    ),
]
