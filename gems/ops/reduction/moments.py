"""Mean and variance in one pass (var, std, var_mean), shared by their operator files.

    mean = K + S1 / n,   M2 = S2 - S1**2 / n,   var = M2 / max(n - correction, 0)
    with S1 = sum(x - K), S2 = sum((x - K)**2) and K the first element of each reduced row

Shifting by an element of the row keeps the subtraction S2 - S1**2 / n from cancelling unless the row
spreads over many orders of magnitude, while each element costs two fused multiply-adds in registers
(Welford's update costs a division); the two sums are reduced across lanes together, once per program.
The input is viewed as (n_outer, n_red, n_inner) by planning.py; fp16/bf16/fp32 accumulate in fp32, fp64
in fp64. As in ATen, a row holding inf or NaN gives NaN for both the variance and the mean.

Squares that overflow: an fp32 row with |x - K| above about 1.8e19 is summed a second time with x - K
scaled by 2**-100, so that std (and a var that fits) come out finite, as the float64 result rounds (ATen's
CUDA kernel, fp32 Welford, gives inf there). fp64 keeps the overflow, as ATen's float64 does everywhere.
Only in the "rows" layout (reduced elements contiguous, not split): in the "cols" layout the rescue's
registers would cost the common case a quarter of its occupancy (64 -> 80 registers per thread on sm_90),
so those keep ATen CUDA's inf, as do split partials.

When the vendor's ``SPLITS`` rule divides a long reduction between programs, each writes (n, mean, M2)
of its part, and a second kernel merges them exactly: n = sum n_i, mean = sum(n_i mean_i) / n,
M2 = sum(M2_i) + sum(n_i (mean_i - mean)**2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import float64_bits
from gems.ops.reduction.planning import (
    TL_DTYPES,
    Launch,
    PlanCache,
    check_reduction_out,
    config,
    output_coords,
    plan_or_permute,
    program_count,
    reduce_max,
    reduce_sum,
    reduced_dims,
    reduced_shape,
    result_strides,
    split_count,
    split_layout,
    tile_k,
)
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback


@triton.jit
def _div(a, b):
    if a.dtype == tl.float32:
        return tl.div_rn(a, b)
    else:
        return a / b


@triton.jit
def _finish(mean, m2, n, corr_bits, a_ptr, b_ptr, offs, mask, STD: tl.constexpr, WRITE_MEAN: tl.constexpr,
            unscale):
    """Store var (or std) = M2 / max(n - correction, 0) at a_ptr, and the mean at b_ptr; m2 is in units of
    unscale**-2 (the rescue pass of _moments_kernel)."""
    correction = tl.cast(tl.cast(corr_bits, tl.int64), tl.float64, bitcast=True).to(m2.dtype)
    divisor = n - correction
    var = _div(m2, tl.where(divisor > 0, divisor, 0))
    if STD:
        if var.dtype == tl.float32:
            var = tl.sqrt_rn(var) * unscale
        else:
            var = tl.sqrt(var) * unscale
    else:
        var = var * unscale * unscale
    tl.store(a_ptr + offs, var.to(a_ptr.dtype.element_ty), mask=mask)
    if WRITE_MEAN:
        tl.store(b_ptr + offs, mean.to(b_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _shifted(x_rows, shift, k, k_end, mask_m, stride_xk, SCALED: tl.constexpr, ACC: tl.constexpr,
             INT64: tl.constexpr, BLOCK_K: tl.constexpr):
    """d = x - shift (times _scale when SCALED) of the elements k ... k + BLOCK_K - 1 below k_end, 0 past it."""
    offs_k, mask = tile_k(k, k_end, mask_m, INT64, BLOCK_K)
    x = tl.load(x_rows[:, None] + offs_k[None, :] * stride_xk, mask=mask, other=0).to(ACC)
    d = tl.where(mask, x - shift[:, None], 0)
    if SCALED:
        d = d * _scale(True)
    return d


@triton.jit
def _shifted_sums(x_rows, shift, k_start, k_end, mask_m, stride_xk, SCALED: tl.constexpr, ACC: tl.constexpr,
                  INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, ONE_STEP: tl.constexpr):
    """(S1, S2) of each row over k_start <= k < k_end (ONE_STEP: at most BLOCK_K of them): per-lane sums in
    the loop, then reduced across lanes."""
    if ONE_STEP:  # the range fits one tile: no running sums kept across loads
        s1 = _shifted(x_rows, shift, k_start, k_end, mask_m, stride_xk, SCALED, ACC, INT64, BLOCK_K)
        s2 = s1 * s1
    else:
        s1 = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
        s2 = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
        for k in range(k_start, k_end, BLOCK_K):
            d = _shifted(x_rows, shift, k, k_end, mask_m, stride_xk, SCALED, ACC, INT64, BLOCK_K)
            s1 += d
            s2 += d * d
    if BLOCK_M == 1:  # one reduction of the joined pair: one pass through shared memory, not two
        return tl.split(reduce_sum(tl.join(s1, s2), 1))
    else:  # (a joined [BLOCK_M, BLOCK_K, 2] tile needs more registers than two reductions cost)
        return reduce_sum(s1, 1), reduce_sum(s2, 1)


@triton.jit
def _scale(DOWN: tl.constexpr):
    """The fp32 rescue pass's scale, an exact power of two: 2**-100 (DOWN) or 2**100. Then |x - K| * 2**-100
    <= 2**29 for every finite fp32 x (squares summed stay finite), and the terms that underflow are below
    2**-78 of the overflowing ones."""
    if DOWN:
        return tl.full([], 7.888609052210118e-31, tl.float32)
    else:
        return tl.full([], 1.2676506002282294e30, tl.float32)


@triton.jit
def _moments_kernel(
    x_ptr, a_ptr, b_ptr, c_ptr,
    n_rows, n_inner, n_red, red_per_split, corr_bits,
    stride_xo, stride_xn, stride_xk,
    stride_oo, stride_on, stride_os,
    STD: tl.constexpr, WRITE_MEAN: tl.constexpr, PARTIAL: tl.constexpr,
    ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
    RESCUE_K: tl.constexpr, ONE_STEP: tl.constexpr,
):
    """Shifted sums of x[o, k, n] over this split's k. PARTIAL: store (mean, M2, n) at (a, b, c) + split *
    stride_os; else var/std at a and the mean at b. RESCUE_K: the rescue pass's block along K (smaller: fewer
    registers held for a path that rarely runs), 0 for none. ONE_STEP: the split fits one BLOCK_K tile (no
    running sums: 31 against 55 registers per thread on sm_90 at 4096 fp16 per row)."""
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    k_start = split * red_per_split
    k_end = tl.minimum(k_start + red_per_split, n_red)
    shift = tl.load(x_rows + k_start * stride_xk, mask=(mask_m & (k_start < k_end)) != 0, other=0).to(ACC)
    t1, t2 = _shifted_sums(x_rows, shift, k_start, k_end, mask_m, stride_xk, False, ACC, INT64, BLOCK_M, BLOCK_K,
                           ONE_STEP)
    n = tl.full([BLOCK_M], 0, ACC) + tl.maximum(k_end - k_start, 0)
    finite = (t1 - t1) == 0  # no inf or NaN in the row (an overflowing t2 alone means a huge variance)
    m2 = tl.where(t2 == float("inf"), t2, t2 - _div(t1 * t1, n))
    m2 = tl.where(finite, tl.where(m2 < 0, 0, m2), float("nan"))
    mean = tl.where(finite, shift + _div(t1, n), float("nan"))
    offs = outer * stride_oo + inner * stride_on + split * stride_os
    if PARTIAL:
        tl.store(a_ptr + offs, mean, mask=mask_m)
        tl.store(b_ptr + offs, m2, mask=mask_m)
        tl.store(c_ptr + offs, n, mask=mask_m)
    else:
        _finish(mean, m2, n, corr_bits, a_ptr, b_ptr, offs, mask_m, STD, WRITE_MEAN, 1.0)
        if RESCUE_K > 0:
            over = mask_m & finite & (t2 == float("inf"))
            if reduce_max(over.to(tl.int32), 0) > 0:  # rare: squares overflow; sum those rows again, scaled
                u1, u2 = _shifted_sums(x_rows, shift, k_start, k_end, mask_m, stride_xk, True, ACC, INT64, BLOCK_M,
                                       RESCUE_K, False)
                m2 = u2 - _div(u1 * u1, n)
                m2 = tl.where(m2 < 0, 0, m2)
                _finish(mean, m2, n, corr_bits, a_ptr, b_ptr, offs, over, STD, False, _scale(False))


@triton.jit
def _merge_kernel(
    mean_ptr, m2_ptr, n_ptr, a_ptr, b_ptr,
    n_rows, n_inner, n_parts, corr_bits,
    stride_po, stride_pn, stride_pk,
    stride_oo, stride_on,
    STD: tl.constexpr, WRITE_MEAN: tl.constexpr,
    ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """Merge the n_parts (mean, M2, n) partials of each output (module docstring) and store var/std, mean."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    rows = outer * stride_po + inner * stride_pn
    n_acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
    sum_acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
    for k in range(0, n_parts, BLOCK_K):
        offs_k, mask = tile_k(k, n_parts, mask_m, INT64, BLOCK_K)
        offs = rows[:, None] + offs_k[None, :] * stride_pk
        n_i = tl.load(n_ptr + offs, mask=mask, other=0)
        n_acc += n_i
        sum_acc += tl.where(n_i > 0, n_i * tl.load(mean_ptr + offs, mask=mask, other=0), 0)
    n = reduce_sum(n_acc, 1)
    mean = _div(reduce_sum(sum_acc, 1), n)
    m2_acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
    for k in range(0, n_parts, BLOCK_K):
        offs_k, mask = tile_k(k, n_parts, mask_m, INT64, BLOCK_K)
        offs = rows[:, None] + offs_k[None, :] * stride_pk
        n_i = tl.load(n_ptr + offs, mask=mask, other=0)
        d = tl.load(mean_ptr + offs, mask=mask, other=0) - mean[:, None]
        m2_acc += tl.where(n_i > 0, tl.load(m2_ptr + offs, mask=mask, other=0) + n_i * d * d, 0)
    m2 = reduce_sum(m2_acc, 1)
    _finish(mean, m2, n, corr_bits, a_ptr, b_ptr, outer * stride_oo + inner * stride_on, mask_m, STD, WRITE_MEAN,
            1.0)


_moments = Launcher(_moments_kernel)
_merge = Launcher(_merge_kernel)


class _Plan(NamedTuple):
    order: list | None  # when set, the input is first copied contiguous in this dim order
    first: Launch
    merge: Launch | None  # the second pass of a split reduction
    partial: tuple | None  # (shape, dtype) of each partial buffer


def _plan(x, reduced, keepdim, out, std, want_mean, correction):
    full = result_strides(x.dim(), reduced, keepdim, out.stride())
    order, layout = plan_or_permute(x.shape, reduced, (x.stride(), full))
    if layout is None:
        return None
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    tl_acc, bits = TL_DTYPES[acc], float64_bits(float(correction))
    cfg = config("reduction", layout)
    block_m, block_k, warps = cfg["BLOCK_M"], cfg["BLOCK_K"], cfg["num_warps"]
    splits, per_split = split_count(cfg, layout.n_red)
    (sxo, sxk, sxn), (soo, _, son) = layout.strides
    grid = program_count(layout, block_m)
    if splits <= 1:
        args = (layout.n_rows, layout.n_inner, layout.n_red, per_split, bits, sxo, sxn, sxk, soo, son, 0,
                std, want_mean, False, tl_acc, layout.cols, layout.needs_int64(), block_m, block_k,
                0 if layout.cols or acc == torch.float64 else max(1, block_k // 4), per_split <= block_k)
        return _Plan(order, Launch((grid, 1), args, warps), None, None)
    args = (layout.n_rows, layout.n_inner, layout.n_red, per_split, bits, sxo, sxn, sxk, layout.n_inner, 1,
            layout.n_rows, std, want_mean, True, tl_acc, layout.cols, layout.needs_int64(splits * layout.n_rows),
            block_m, block_k, 0, per_split <= block_k)
    second = split_layout(layout, splits, (soo, son))
    cfg2 = config("reduction", second)
    (po, pk, pn), (oo, _, on) = second.strides
    merge_args = (second.n_rows, second.n_inner, splits, bits, po, pn, pk, oo, on, std, want_mean, tl_acc,
                  second.cols, second.needs_int64(splits * layout.n_rows), cfg2["BLOCK_M"], cfg2["BLOCK_K"])
    merge = Launch((program_count(second, cfg2["BLOCK_M"]),), merge_args, cfg2["num_warps"])
    return _Plan(order, Launch((grid, splits), args, warps), merge, ((splits, layout.n_rows), acc))


_plans = PlanCache()


def moments(x, dim, correction, keepdim, std=False, want_mean=False, out=None):
    """(var or std, mean or None) of x over ``dim`` (None or []: all) with ATen's checks; out: the
    ``out=`` tensor of the var/std."""
    if not x.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"var/std of {x.dtype} is not handled by gems")
    correction = 1 if correction is None else correction
    if isinstance(correction, torch.Tensor) or not math.isfinite(float(correction)):
        raise Fallback("a tensor or non-finite correction is left to ATen")
    reduced = reduced_dims(x, dim)
    shape = reduced_shape(x.shape, reduced, keepdim)
    if out is not None:
        check_reduction_out(out, x.device, shape)
        if not out.dtype.is_floating_point:
            raise Fallback(f"var/std into {out.dtype}: left to ATen")
    result = out if out is not None else torch.empty(shape, dtype=x.dtype, device=x.device)
    mean = torch.empty(shape, dtype=x.dtype, device=x.device) if want_mean else result
    if mean.stride() != result.stride():
        fresh, m = moments(x, dim, correction, keepdim, std, want_mean)
        return result.copy_(fresh), m
    if result.numel():
        key = (x.shape, x.stride(), x.dtype, reduced, keepdim, std, want_mean, float(correction), result.stride())
        p = _plans.get(key) or _plans.put(key, _plan(x, reduced, keepdim, result, std, want_mean, correction))
        if p is None:
            fresh, m = moments(x, dim, correction, keepdim, std, want_mean)
            return result.copy_(fresh), m
        src = x.permute(p.order).contiguous() if p.order is not None else x
        if p.merge is None:
            _moments(p.first.grid, src, result, mean, result, *p.first.args, num_warps=p.first.num_warps)
        else:
            parts = [torch.empty(p.partial[0], dtype=p.partial[1], device=x.device) for _ in range(3)]
            _moments(p.first.grid, src, *parts, *p.first.args, num_warps=p.first.num_warps)
            _merge(p.merge.grid, *parts, result, mean, *p.merge.args, num_warps=p.merge.num_warps)
    return result, (mean if want_mean else None)
