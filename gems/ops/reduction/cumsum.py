"""cumsum: ``cumsum`` and ``cumsum.out`` (torch.cumsum, Tensor.cumsum; cumsum's own backward is a
flipped cumsum, so training runs it both ways).

    out[..., k, ...] = sum of x[..., :k+1, ...] along dim

Layout as in gems/ops/reduction/scanning.py: each program scans BLOCK_M rows in steps of BLOCK_K,
carrying the running sums, so every element is read once and written once. When the rows alone give
too few programs to fill the device (a few long rows, where one program per row would walk a whole
row serially), the vendor's ``SPLITS`` rule of the "reduction" key cuts each row into chunks and the
scan becomes a blocked one: (1) each chunk's sum, (2) a scan of those sums per row (this kernel, on a
tiny tensor), (3) each chunk scanned from the sum of the chunks before it. That reads the input twice
instead of once, for the parallelism.

Numerics follow ATen: the input is converted to the result dtype (``dtype=``, else out's, else the
input's, integers and bool giving int64), then accumulated in fp32 (fp16, bf16, fp32), fp64 or int64
(integer results wrap as ATen's do).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.dtypes import ALL
from gems.ops.reduction.planning import (
    TL_DTYPES,
    Layout,
    PlanCache,
    accumulation_dtype,
    config,
    contiguous_strides,
    output_coords,
    program_count,
    reduce_sum,
    tile_k,
    wrap_dim,
)
from gems.ops.reduction.scanning import scan_layout
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

# --------------------------------------------------------------------------- kernels


@triton.jit
def _load_converted(ptrs, mask, CAST: tl.constexpr, ACC: tl.constexpr):
    """Elements as ATen sees them: converted to the result dtype, then widened to the accumulator."""
    return tl.load(ptrs, mask=mask, other=0).to(CAST).to(ACC)


@triton.jit
def _cumsum_kernel(
    x_ptr, out_ptr, carry_ptr,
    n_rows, n_inner, n_red, red_per_split,
    stride_xo, stride_xk, stride_xn,
    stride_oo, stride_ok, stride_on,
    CAST: tl.constexpr, ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr, HAS_CARRY: tl.constexpr,
    MULTI_STEP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """out[o, k, n] = carry + sum of x[o, start:k+1, n] over this program's chunk of the row, walked in
    steps of BLOCK_K (MULTI_STEP: more than one).

    Grid: (programs over the rows, chunks of red_per_split elements). With HAS_CARRY, the chunk starts
    from carry[row, chunk - 1] (the inclusive scan of the chunk sums, (n_rows, chunks) contiguous).
    """
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    out_rows = out_ptr + outer * stride_oo + inner * stride_on
    k_start = split * red_per_split
    k_end = tl.minimum(k_start + red_per_split, n_red)
    # Starting from +0 makes a leading -0.0 give +0.0, as ATen's "0 + x" does.
    carry = tl.full([BLOCK_M], 0, ACC)
    if HAS_CARRY:
        chunks = tl.num_programs(1)
        row = outer * n_inner + inner
        # != 0: triton 3.9 gives a bool tensor & a scalar comparison as int32, which a mask must not be
        carry += tl.load(carry_ptr + row * chunks + split - 1, mask=(mask_m & (split > 0)) != 0, other=0)
    for k in range(k_start, k_end, BLOCK_K):
        offs_k, mask = tile_k(k, k_end, mask_m, INT64, BLOCK_K)
        x = _load_converted(x_rows[:, None] + offs_k[None, :] * stride_xk, mask, CAST, ACC)
        total = tl.associative_scan(x, 1, tl.standard._sum_combine) + carry[:, None]
        tl.store(out_rows[:, None] + offs_k[None, :] * stride_ok, total.to(out_ptr.dtype.element_ty), mask=mask)
        if MULTI_STEP:  # (a row that fits one step, the common case, needs no carry)
            # The last lane's running sum (lanes past the end hold the same: they added zeros).
            carry = reduce_sum(tl.where(offs_k[None, :] == k + BLOCK_K - 1, total, 0), 1)


@triton.jit
def _chunk_sum_kernel(
    x_ptr, sums_ptr,
    n_rows, n_inner, n_red, red_per_split,
    stride_xo, stride_xk, stride_xn,
    CAST: tl.constexpr, ACC: tl.constexpr, COLS: tl.constexpr, INT64: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """sums[row, chunk] = sum of x over the chunk (the first step of the blocked scan)."""
    pid = tl.program_id(0)
    split = tl.program_id(1)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
        split = split.to(tl.int64)
    outer, inner, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    x_rows = x_ptr + outer * stride_xo + inner * stride_xn
    k_start = split * red_per_split
    k_end = tl.minimum(k_start + red_per_split, n_red)
    acc = tl.full([BLOCK_M, BLOCK_K], 0, ACC)
    for k in range(k_start, k_end, BLOCK_K):
        offs_k, mask = tile_k(k, k_end, mask_m, INT64, BLOCK_K)
        acc += _load_converted(x_rows[:, None] + offs_k[None, :] * stride_xk, mask, CAST, ACC)
    row = outer * n_inner + inner
    tl.store(sums_ptr + row * tl.num_programs(1) + split, reduce_sum(acc, 1), mask=mask_m)


_cumsum_launcher = Launcher(_cumsum_kernel)
_chunk_sum_launcher = Launcher(_chunk_sum_kernel)

# --------------------------------------------------------------------------- plans


class CumsumPlan(NamedTuple):
    dtype: torch.dtype  # the result's dtype
    copy: bool  # the input is copied contiguous first and the result computed into a fresh tensor
    grid: tuple
    args: tuple  # sizes, strides and constexprs after the three pointers
    num_warps: int
    chunks: tuple | None  # blocked scan: (acc dtype, args of the chunk sums, args of their scan)


def _cumsum_plan(x, dim, dtype, out_strides) -> CumsumPlan:
    if x.dtype not in ALL:
        raise Fallback(f"cumsum of {x.dtype} is not handled by gems")
    if dtype not in ALL or dtype == torch.bool:
        raise Fallback(f"cumsum to {dtype} is left to ATen")  # ATen refuses bool results
    dim = wrap_dim(dim, x.dim())
    if x.numel() == 0:  # nothing to launch (and the vendor's block-size rules may divide by a zero length)
        return CumsumPlan(dtype, False, (0, 1), (), 1, None)
    layout, copy = scan_layout(x.shape, dim, [x.stride(), out_strides])
    cfg = config("reduction", layout)
    block_m, block_k, warps = cfg["BLOCK_M"], cfg["BLOCK_K"], cfg["num_warps"]
    acc_dtype = accumulation_dtype(dtype)
    cast, acc = TL_DTYPES[dtype], TL_DTYPES[acc_dtype]
    n_red, int64 = layout.n_red, layout.needs_int64()
    programs = program_count(layout, block_m)
    splits = cfg.get("SPLITS", 1)
    per_split = cdiv(cdiv(n_red, splits), block_k) * block_k if splits > 1 else n_red
    splits = cdiv(n_red, per_split) if n_red else 1
    sizes = (layout.n_rows, layout.n_inner, n_red, max(per_split, 1))
    strides = tuple(s for per in layout.strides for s in per)
    if splits <= 1:
        args = (*sizes, *strides, cast, acc, layout.cols, int64, False, n_red > block_k, block_m, block_k)
        return CumsumPlan(dtype, copy, (programs, 1), args, warps, None)
    x_strides = strides[:3]
    sums_args = (*sizes, *x_strides, cast, acc, layout.cols, int64, block_m, block_k)
    # The chunk sums, (n_rows, splits) contiguous, scanned in place along their rows.
    sums_layout = Layout(False, layout.n_rows, splits, 1, ((splits, 1, 0), (splits, 1, 0)))
    sums_cfg = config("reduction", sums_layout)
    scan_args = (layout.n_rows, 1, splits, splits, splits, 1, 0, splits, 1, 0, acc, acc, False,
                 sums_layout.needs_int64(), False, splits > sums_cfg["BLOCK_K"], sums_cfg["BLOCK_M"],
                 sums_cfg["BLOCK_K"])
    scan_launch = ((program_count(sums_layout, sums_cfg["BLOCK_M"]), 1), scan_args, sums_cfg["num_warps"])
    args = (*sizes, *strides, cast, acc, layout.cols, int64, True, per_split > block_k, block_m, block_k)
    return CumsumPlan(dtype, copy, (programs, splits), args, warps, (acc_dtype, sums_args, scan_launch))


def _run(p: CumsumPlan, x, out):
    if p.copy:
        x = x.contiguous()
    if p.chunks is None:
        _cumsum_launcher(p.grid, x, out, out, *p.args, num_warps=p.num_warps)
        return out
    acc_dtype, sums_args, (scan_grid, scan_args, scan_warps) = p.chunks
    sums = torch.empty((sums_args[0], p.grid[1]), dtype=acc_dtype, device=x.device)
    _chunk_sum_launcher(p.grid, x, sums, *sums_args, num_warps=p.num_warps)
    _cumsum_launcher(scan_grid, sums, sums, sums, *scan_args, num_warps=scan_warps)
    _cumsum_launcher(p.grid, x, out, sums, *p.args, num_warps=p.num_warps)
    return out


_plans = PlanCache()


def _result_dtype(x, dtype, out):
    if dtype is not None:
        if out is not None and out.dtype != dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
        return dtype
    if out is not None:
        return out.dtype
    return x.dtype if x.dtype.is_floating_point else torch.int64


def _cumsum(x, dim, dtype, out):
    dtype = _result_dtype(x, dtype, out)
    if out is None:
        key = (x.shape, x.stride(), x.dtype, dim, dtype)
        p = _plans.get(key) or _plans.put(key, _cumsum_plan(x, dim, dtype, contiguous_strides(x.shape)))
        result = torch.empty(x.shape, dtype=dtype, device=x.device)
        return _run(p, x, result) if x.numel() else result
    if out.device != x.device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected out tensor to have device {x.device}, but got {out.device} instead")
    if out.shape != x.shape:
        out.resize_(x.shape)
    p = _cumsum_plan(x, dim, dtype, out.stride())
    if x.numel() == 0:
        return out
    if p.copy:  # an out= whose strides do not take the input's view: compute, then copy
        return out.copy_(_cumsum(x, dim, dtype, None))
    return _run(p, x, out)


# --------------------------------------------------------------------------- ATen overloads


def cumsum(self, dim, *, dtype=None):
    return _cumsum(self, dim, dtype, None)


def cumsum_out(self, dim, *, dtype=None, out):
    return _cumsum(self, dim, dtype, out)


SPECS = [
    OpSpec(
        name="cumsum", family="reduction",
        impls={"cumsum": cumsum, "cumsum.out": cumsum_out},
        call=torch.cumsum,
        samples=lazy("gems.testing.samples_scan", "scan_samples", "cumsum", out="cumsum.out", dtype_arg=True),
        dtypes=ALL,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_softmax", "rows_perf_inputs"), shapes="scan",
                      bytes=lazy("gems.testing.samples_softmax", "io_bytes")),
    ),
]
