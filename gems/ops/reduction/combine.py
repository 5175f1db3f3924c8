"""One reduction kernel for every "combine the elements" operator: sum, mean, prod, amax/amin, aminmax,
all/any, count_nonzero, the vector norms, equal and the inner products (dot, vdot, a one-row gemv), told
apart by three constexprs (a ``Kind``):

    out[o, n] = POST(OP over k of PRE(x[o, k, n]))

PRE: the element as the operator sees it (converted to the ``cast`` dtype, then its absolute value,
square, |x|**p, "is nonzero", "differs from y", or x * y); OP: sum, product, max, min, or both max and min
(aminmax, two outputs); POST: nothing, divide by the reduced length (mean), sqrt or the 1/p-th power.
Each tile element keeps its own running value across the loop over K (one pass, no cross-lane work in
the loop); the tile is combined across K once at the end. max/min propagate NaN as ATen does (per lane with the
NaN-propagating max/min, across lanes by one integer reduction of order keys, planning.order_key).

The input is viewed as (n_outer, n_red, n_inner) by planning.py. When the outputs alone give too few
programs to fill the device, the vendor's ``SPLITS`` rule divides the reduced range between programs;
each writes its partial result in the accumulation dtype and a second launch of the same kernel (PRE
none, the same OP, the POST) reduces the partials. Block sizes: the vendor's heuristics, key "reduction".
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import float64_bits
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
    reduce_prod,
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

# PRE: what each element contributes.
PRE_NONE, PRE_NONZERO, PRE_ABS, PRE_SQUARE, PRE_POW, PRE_NE, PRE_MUL = range(7)
# OP: how contributions combine.
SUM, PROD, MAX, MIN, MINMAX = range(5)
# POST: applied to the combined value.
POST_NONE, POST_MEAN, POST_SQRT, POST_ROOT = range(4)


class Kind(NamedTuple):
    """What a reduction computes (see the module docstring)."""

    op: int
    pre: int = PRE_NONE
    post: int = POST_NONE


# --------------------------------------------------------------------------- kernels


@triton.jit
def _contribution(x, y, p, PRE: tl.constexpr, CAST: tl.constexpr, ACC: tl.constexpr):
    """An element as the reduction sees it, in the accumulation dtype."""
    if PRE == 5:  # PRE_NE: x and y differ (NaN differs from itself, as in ATen's equal)
        if x.dtype == tl.float16 or x.dtype == tl.bfloat16:  # exact in fp32 (the interpreter has no bf16 math)
            return (x.to(tl.float32) != y.to(tl.float32)).to(ACC)
        return (x != y).to(ACC)
    if PRE == 6:  # PRE_MUL: x * y, both converted first (fp16/bf16 products in fp32, exact)
        return x.to(CAST).to(ACC) * y.to(CAST).to(ACC)
    if CAST == tl.int1:  # to bool means "is nonzero", not a truncation (fp16/bf16 compared in fp32, exact)
        if x.dtype == tl.float16 or x.dtype == tl.bfloat16:
            v = (x.to(tl.float32) != 0).to(ACC)
        else:
            v = (x != 0).to(ACC)
    elif PRE == 1:  # "is nonzero" before any conversion to an integer accumulator truncates 0.5
        v = x.to(CAST)
        if v.dtype == tl.float16 or v.dtype == tl.bfloat16:  # compared in fp32 (triton 3.9's interpreter erred)
            v = v.to(tl.float32)
        v = (v != 0).to(ACC)
    else:
        v = x.to(CAST).to(ACC)
    if PRE == 2:
        v = tl.abs(v)
    elif PRE == 3:
        v = v * v
    elif PRE == 4:
        v = libdevice.pow(tl.abs(v), p)
    return v


@triton.jit
def _max_step(acc, v):
    return tl.maximum(acc, v, propagate_nan=tl.PropagateNan.ALL)  # a NaN, once in, stays


@triton.jit
def _min_step(acc, v):
    return tl.minimum(acc, v, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _step(acc, acc2, x_rows, y_rows, k, k_end, mask_m, stride_xk, stride_yk, p, ident, PRE: tl.constexpr,
          OP: tl.constexpr, CAST: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr, BLOCK_K: tl.constexpr,
          FIRST: tl.constexpr):
    """The running values (acc, acc2) after the elements k ... k + BLOCK_K - 1 (below k_end). FIRST: acc and
    acc2 hold the identity (ident), so a max/min of the contributions with them is the contributions (the
    identity is a runtime argument: the compiler would keep one max per element)."""
    offs_k, mask = tile_k(k, k_end, mask_m, INT64, BLOCK_K)
    x_ptrs = x_rows[:, None] + offs_k[None, :] * stride_xk
    if FIRST and PRE == 0 and OP >= 2 and x_rows.dtype.element_ty.is_floating() and ACC.is_floating():
        # Masked lanes load the identity itself: no select after the conversion to ACC, so the compiler
        # can take the halvings' max (min) before that conversion (2 conversions per 16 fp16 elements, not 16).
        v = tl.load(x_ptrs, mask=mask, other=ident).to(CAST).to(ACC)
        if OP == 4:
            acc2 = tl.where(mask, v, acc2)
        return v, acc2
    x = tl.load(x_ptrs, mask=mask, other=0)
    y = x
    if PRE >= 5:  # PRE_NE, PRE_MUL: a second input
        y = tl.load(y_rows[:, None] + offs_k[None, :] * stride_yk, mask=mask, other=0)
    v = _contribution(x, y, p, PRE, CAST, ACC)
    if OP == 0:
        acc += tl.where(mask, v, 0)
    elif OP == 1:
        acc *= tl.where(mask, v, 1)
    elif FIRST:
        acc = tl.where(mask, v, acc)
        if OP == 4:
            acc2 = tl.where(mask, v, acc2)
    elif OP == 2:
        acc = _max_step(acc, tl.where(mask, v, acc))
    else:
        acc = _min_step(acc, tl.where(mask, v, acc))
        if OP == 4:
            acc2 = _max_step(acc2, tl.where(mask, v, acc2))
    return acc, acc2


@triton.jit
def _finish_extreme(acc, IS_MAX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                    HALVES: tl.constexpr):
    """max or min of the tile along K, NaN when any lane holds NaN: one integer reduction of the order keys
    (the builtin float combine ignores NaN on the GPU; a second "any NaN" reduction would cost as much) of
    the tile first halved HALVES times (halve_extreme)."""
    if acc.dtype.is_floating():
        acc = halve_extreme(acc, IS_MAX, BLOCK_M, BLOCK_K, HALVES)
        if IS_MAX:
            total = from_order_key(reduce_max(order_key(acc, True), 1))
        else:
            total = from_order_key(reduce_min(order_key(acc, False), 1))
    else:
        if IS_MAX:
            total = reduce_max(acc, 1)
        else:
            total = reduce_min(acc, 1)
    return total


@triton.jit
def _finish(total, count, p, POST: tl.constexpr):
    if POST == 1:  # mean: ATen's mean is the sum divided by the count, correctly rounded
        n = tl.full(total.shape, 0, total.dtype) + count
        if total.dtype == tl.float32:
            total = tl.div_rn(total, n)
        else:
            total = total / n
    elif POST == 2:
        if total.dtype == tl.float32:
            total = tl.sqrt_rn(total)
        else:
            total = tl.sqrt(total)
    elif POST == 3:
        one = tl.full(total.shape, 1, total.dtype)
        if total.dtype == tl.float32:
            inv = tl.div_rn(one, one * p)
        else:
            inv = one / p
        total = libdevice.pow(total, inv)
    return total


@triton.jit
def _store(out_ptr, offs, total, mask):
    if out_ptr.dtype.element_ty == tl.int1:
        total = total != 0
    tl.store(out_ptr + offs, total.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _combine_kernel(
    x_ptr, y_ptr, out_ptr, out2_ptr,
    n_rows, n_inner, n_red, red_per_split, count, p_bits, ident, ident2,
    stride_xo, stride_xn, stride_xk,
    stride_yo, stride_yn, stride_yk,
    stride_oo, stride_on, stride_os,
    PRE: tl.constexpr, OP: tl.constexpr, POST: tl.constexpr,
    CAST: tl.constexpr, ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, ONE_STEP: tl.constexpr, HALVES: tl.constexpr,
):
    """out[o, n] (+ split * stride_os) = POST(OP over k in this split's range of PRE(x[o, k, n])).

    Grid: (programs over the outputs, splits of the reduced range). ident/ident2: OP's identity (for
    MINMAX: the min's, then the max's); p_bits: the exponent of PRE_POW / POST_ROOT as float64 bits.
    HALVES: halvings of a max/min tile before its order-key reduction (_finish_extreme).
    """
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    p = tl.cast(tl.cast(p_bits, tl.int64), tl.float64, bitcast=True).to(ACC)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    y_rows = y_ptr + outer * stride_yo + inner * stride_yn
    k_start = split * red_per_split
    k_end = tl.minimum(k_start + red_per_split, n_red)
    acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC) + ident
    acc2 = tl.full([BLOCK_M, BLOCK_K], 0, ACC) + ident2
    if ONE_STEP:  # the split fits one tile: no running values kept across loads
        acc, acc2 = _step(acc, acc2, x_rows, y_rows, k_start, k_end, mask_m, stride_xk, stride_yk, p,
                          ident, PRE, OP, CAST, ACC, INT64, BLOCK_K, True)
    else:
        for k in range(k_start, k_end, BLOCK_K):
            acc, acc2 = _step(acc, acc2, x_rows, y_rows, k, k_end, mask_m, stride_xk, stride_yk, p,
                              ident, PRE, OP, CAST, ACC, INT64, BLOCK_K, False)
    if OP == 0:
        total = reduce_sum(acc, 1)
    elif OP == 1:
        total = reduce_prod(acc, 1)
    else:
        total = _finish_extreme(acc, OP == 2, BLOCK_M, BLOCK_K, HALVES)
    offs = outer * stride_oo + inner * stride_on + split * stride_os
    _store(out_ptr, offs, _finish(total, count, p, POST), mask_m)
    if OP == 4:
        _store(out2_ptr, offs, _finish_extreme(acc2, True, BLOCK_M, BLOCK_K, HALVES), mask_m)


_launcher = Launcher(_combine_kernel)


# --------------------------------------------------------------------------- plans


def identity(op: int, acc: torch.dtype, flags: bool = False):
    """OP's identity in ``acc`` as a kernel argument (masked lanes and empty reductions hold it);
    flags: the contributions are 0 or 1 (all, any: an empty any is False, an empty all True)."""
    if op == SUM or (flags and op == MAX):
        return 0
    if op == PROD or flags:
        return 1
    high = math.inf if acc.is_floating_point else torch.iinfo(acc).max
    low = -math.inf if acc.is_floating_point else torch.iinfo(acc).min
    return low if op == MAX else high


class _Plan(NamedTuple):
    order: list | None  # when set, the input is first copied contiguous in this dim order
    launches: tuple  # first-pass launch, then the second-pass ones (reading the partials)
    partial: tuple | None  # (shape, dtype) of each partial buffer of a split reduction


def _launches(layout, kind: Kind, cast, acc, count, p, allow_split=True):
    cfg = config("reduction", layout)
    block_m, block_k, warps = cfg["BLOCK_M"], cfg["BLOCK_K"], cfg["num_warps"]
    (sxo, sxk, sxn), (syo, syk, syn), (soo, _, son) = layout.strides
    splits, per_split = split_count(cfg, layout.n_red) if allow_split else (1, max(layout.n_red, 1))
    tl_acc = TL_DTYPES[acc]
    flags = kind.pre in (PRE_NONZERO, PRE_NE)
    ident = identity(MIN if kind.op == MINMAX else kind.op, acc, flags)
    ident2 = identity(MAX, acc, flags) if kind.op == MINMAX else ident
    p_bits = float64_bits(float(p))

    def launch(lay, grid_splits, per, pre, post, cast_, out_strides, extra):
        (xo, xk, xn), (yo, yk, yn) = lay.strides[0], lay.strides[1]
        args = (lay.n_rows, lay.n_inner, lay.n_red, per, count, p_bits, ident, ident2, xo, xn, xk, yo, yn, yk,
                *out_strides, pre, kind.op, post, cast_, tl_acc, lay.cols, lay.needs_int64(extra),
                block_m, block_k, per <= block_k, halves(lay, block_k, max(1, cast_.primitive_bitwidth // 8)))
        return Launch((program_count(lay, block_m), grid_splits), args, warps)

    if splits <= 1:
        return (launch(layout, 1, per_split, kind.pre, kind.post, cast, (soo, son, 0), 0),), None
    first = launch(layout, splits, per_split, kind.pre, POST_NONE, cast, (layout.n_inner, 1, layout.n_rows),
                   splits * layout.n_rows)
    second = split_layout(layout, splits, (soo, son))
    second = second._replace(strides=(second.strides[0], (0, 0, 0), second.strides[1]))
    rest = []
    for op in ((MIN, MAX) if kind.op == MINMAX else (kind.op,)):
        (final,), _ = _launches(second, Kind(op, PRE_NONE, kind.post), tl_acc, acc, count, p, allow_split=False)
        rest.append(final)
    return (first, *rest), ((splits, layout.n_rows), acc)


_plans = PlanCache()


def _plan(x, y, reduced, keepdim, outs, kind, cast, acc, p):
    """Plan for tensors ``outs`` (the results, 1 or 2 of one stride) of x reduced over ``reduced``."""
    full = result_strides(x.dim(), reduced, keepdim, outs[0].stride())
    strides = (x.stride(), y.stride() if y is not None else x.stride(), full)
    order, layout = plan_or_permute(x.shape, reduced, strides, inputs=2)
    if layout is None:
        return None
    count = math.prod(x.shape[d] for d in reduced)
    launches, partial = _launches(layout, kind, TL_DTYPES[cast], acc, count, p)
    return _Plan(order, launches, partial)


def _run(p: _Plan, x, y, outs):
    if p.order is not None:
        x = x.permute(p.order).contiguous()
        y = y.permute(p.order).contiguous() if y is not None else None
    y = x if y is None else y
    out2 = outs[-1]
    if p.partial is None:
        (launch,) = p.launches
        _launcher(launch.grid, x, y, outs[0], out2, *launch.args, num_warps=launch.num_warps)
        return
    parts = [torch.empty(p.partial[0], dtype=p.partial[1], device=x.device) for _ in outs]
    first, *rest = p.launches
    _launcher(first.grid, x, y, parts[0], parts[-1], *first.args, num_warps=first.num_warps)
    for part, out, launch in zip(parts, outs, rest):
        _launcher(launch.grid, part, part, out, out, *launch.args, num_warps=launch.num_warps)


def reduce_extreme(x, dim, keepdim, op, name, out=None, outs=None):
    """amax / amin (op MAX, MIN) or aminmax (MINMAX) of x, in x's dtype, with ATen's checks."""
    for o in (outs or ([out] if out is not None else [])):
        if o.dtype != x.dtype:
            raise RuntimeError(f"Expected the dtype for input and out to match, but got {x.dtype} for input's dtype "
                               f"and {o.dtype} for out's dtype.")
    check_nonempty(x, dim, name)
    if x.dtype not in TL_DTYPES:
        raise Fallback(f"{name} of {x.dtype} is not handled by gems")
    return reduce(x, dim, keepdim, Kind(op), x.dtype, outs=outs or (None if out is None else [out]))


def reduce(x, dim, keepdim, kind: Kind, dtype, *, cast=None, acc=None, outs=None, y=None, p=0.0, reduced=None):
    """``kind`` of x over ``dim`` (None or [] for all dims); returns the result tensors (2 for MINMAX).

    dtype: the results' dtype; cast: the dtype each element is first converted to (default dtype);
    acc: the accumulation dtype (default: fp32 for fp16/bf16/fp32, fp64, int64 for integers and bool);
    outs: ``out=`` tensors (resized as ATen does); y: a second input of x's shape (PRE_NE, PRE_MUL); reduced:
    the dims, when the caller has resolved ``dim`` itself (all.dims reduces none for []).
    """
    cast = cast or dtype
    acc = acc or (torch.float64 if cast == torch.float64 else torch.float32 if cast.is_floating_point
                  else torch.int64)
    reduced = reduced_dims(x, dim) if reduced is None else reduced
    shape = reduced_shape(x.shape, reduced, keepdim)
    n_outs = 2 if kind.op == MINMAX else 1
    if outs is None:
        key = (x.shape, x.stride(), x.dtype, reduced, keepdim, kind, dtype, cast, acc, p,
               None if y is None else y.stride())
        outs = [torch.empty(shape, dtype=dtype, device=x.device) for _ in range(n_outs)]
        if not outs[0].numel():
            return outs
        plan = _plans.get(key) or _plans.put(key, _plan(x, y, reduced, keepdim, outs, kind, cast, acc, p))
        _run(plan, x, y, outs)
        return outs
    for out in outs:
        check_reduction_out(out, x.device, shape)
    if not outs[0].numel():
        return outs
    plan = None
    if all(o.stride() == outs[0].stride() for o in outs):
        plan = _plan(x, y, reduced, keepdim, outs, kind, cast, acc, p)
    if plan is None:  # out= tensors whose strides merge in no order: compute, then copy
        fresh = reduce(x, dim, keepdim, kind, dtype, cast=cast, acc=acc, y=y, p=p, reduced=reduced)
        return [out.copy_(f) for out, f in zip(outs, fresh)]
    _run(plan, x, y, outs)
    return outs

