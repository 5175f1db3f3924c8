"""The backward of the row normalizations (layer_norm, rms_norm and the fused norms of gems/ops/fused/),
split from rows.py (the forward and the shared row planning):

    xhat = (x - mean) * rstd,  g = (w + W_OFFSET) * dy,
    dx = rstd * (g - xhat * sum(g * xhat) / n - sum(g) / n)  (rms: without the last term)  [+ ds]
    dw = sum over rows of dy * xhat,  db = sum over rows of dy

ds is the gradient that reaches a fused norm's residual sum s = x + r directly (it feeds the next residual
add as well as the norm), added to dx as it is stored. The backward writes per-program partial dw/db rows,
which ``column_sum_kernel`` adds in a fixed order.
"""

from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from gems.ops.normalization.rows import as_rows, compute_dtype, needs_int64, offset, row_config
from gems.ops.normalization.statistics import div_n
from gems.ops.reduction.planning import reduce_sum, tile_k
from gems.runtime import operators
from gems.runtime.launch import Launcher, cdiv, next_power_of_2, packed


@functools.lru_cache(maxsize=16)
def parallel_programs(device: torch.device) -> int:
    """Programs for kernels that loop over rows (backward): enough to fill the device, few enough that
    the partial dw/db rows they write stay small. The interpreter runs two (the partial sums still add)."""
    if triton.knobs.runtime.interpret:
        return 2
    if device.type == "cuda":  # unreached on the interpreter: CUDA
        return 2 * torch.cuda.get_device_properties(device).multi_processor_count
    return 256  # unreached on the interpreter: another device type


# --------------------------------------------------------------------------- kernels


@triton.jit
def _row_grad_tile(dy_rows, stride_dyn, x_rows, stride_xn, w_ptr, mean, rstd, offs, mask, n_cols,
                   RMS: tl.constexpr, HAS_W: tl.constexpr, W_OFFSET: tl.constexpr, COMPUTE: tl.constexpr):
    """(dy, xhat, (w + W_OFFSET) * dy) of one tile."""
    dy = tl.load(dy_rows[:, None] + offs[None, :] * stride_dyn, mask=mask, other=0).to(COMPUTE)
    x = tl.load(x_rows[:, None] + offs[None, :] * stride_xn, mask=mask, other=0).to(COMPUTE)
    if RMS:
        xhat = x * rstd[:, None]
    else:
        xhat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0)
    g = dy
    if HAS_W:
        g = dy * offset(tl.load(w_ptr + offs, mask=offs < n_cols, other=0).to(COMPUTE), W_OFFSET)[None, :]
    return dy, xhat, g


@triton.jit
def _store_dx(dx_rows, ds_rows, stride_dsn, offs, mask, dx, rstd, HAS_DS: tl.constexpr, COMPUTE: tl.constexpr):
    """dx * rstd (+ ds, the gradient reaching the residual sum directly), rounded once."""
    dx = dx * rstd[:, None]
    if HAS_DS:
        dx += tl.load(ds_rows[:, None] + offs[None, :] * stride_dsn, mask=mask, other=0).to(COMPUTE)
    tl.store(dx_rows[:, None] + offs[None, :], dx.to(dx_rows.dtype.element_ty), mask=mask)


@triton.jit
def row_backward_kernel(
    dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, ds_ptr, dx_ptr, dw_ptr, db_ptr,
    n_rows, n_cols, rows_per_program, stride_dym, stride_dyn, stride_xm, stride_xn, stride_dsm, stride_dsn,
    RMS: tl.constexpr, HAS_W: tl.constexpr, W_OFFSET: tl.constexpr, HAS_DS: tl.constexpr, DX: tl.constexpr,
    DW: tl.constexpr, DB: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, ONE_PASS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """dx for rows pid * rows_per_program ... (contiguous), and this program's partial dw, db sums in row
    pid of the contiguous (programs, n_cols) dw_ptr, db_ptr buffers (every element written)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    row_start = pid * rows_per_program
    dw_acc = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
    db_acc = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
    for i in range(0, rows_per_program, BLOCK_M):
        rows = row_start + i + tl.arange(0, BLOCK_M)
        mask_m = rows < n_rows
        dy_rows = dy_ptr + rows * stride_dym
        x_rows = x_ptr + rows * stride_xm
        dx_rows = dx_ptr + rows * n_cols
        ds_rows = ds_ptr + rows * stride_dsm
        rstd = tl.load(rstd_ptr + rows, mask=mask_m, other=0).to(COMPUTE)
        mean = tl.full([BLOCK_M], 0, COMPUTE)
        if not RMS:
            mean = tl.load(mean_ptr + rows, mask=mask_m, other=0).to(COMPUTE)
        if ONE_PASS:
            offs, mask = tile_k(0, n_cols, mask_m, INT64, BLOCK_N)
            dy, xhat, g = _row_grad_tile(dy_rows, stride_dyn, x_rows, stride_xn, w_ptr, mean, rstd, offs, mask,
                                         n_cols, RMS, HAS_W, W_OFFSET, COMPUTE)
            if DX:
                c1 = div_n(reduce_sum(g * xhat, 1), n_cols)
                dx = g - xhat * c1[:, None]
                if not RMS:
                    dx = dx - div_n(reduce_sum(g, 1), n_cols)[:, None]
                _store_dx(dx_rows, ds_rows, stride_dsn, offs, mask, dx, rstd, HAS_DS, COMPUTE)
            if DW:
                dw_acc += dy * xhat
            if DB:
                db_acc += dy
        else:
            acc1 = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
            acc2 = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
            if DX:
                for k in range(0, n_cols, BLOCK_N):
                    offs, mask = tile_k(k, n_cols, mask_m, INT64, BLOCK_N)
                    dy, xhat, g = _row_grad_tile(dy_rows, stride_dyn, x_rows, stride_xn, w_ptr, mean, rstd, offs,
                                                 mask, n_cols, RMS, HAS_W, W_OFFSET, COMPUTE)
                    acc1 += g * xhat
                    acc2 += g
            c1 = div_n(reduce_sum(acc1, 1), n_cols)
            c2 = div_n(reduce_sum(acc2, 1), n_cols)
            for k in range(0, n_cols, BLOCK_N):
                offs, mask = tile_k(k, n_cols, mask_m, INT64, BLOCK_N)
                mask_n = offs < n_cols
                dy, xhat, g = _row_grad_tile(dy_rows, stride_dyn, x_rows, stride_xn, w_ptr, mean, rstd, offs,
                                             mask, n_cols, RMS, HAS_W, W_OFFSET, COMPUTE)
                if DX:
                    dx = g - xhat * c1[:, None]
                    if not RMS:
                        dx = dx - c2[:, None]
                    _store_dx(dx_rows, ds_rows, stride_dsn, offs, mask, dx, rstd, HAS_DS, COMPUTE)
                # This program alone owns row pid of the partial buffers: a plain read-add-write, after a
                # first row block that writes it (the buffers come uninitialized).
                if DW:
                    part = dw_ptr + pid * n_cols + offs
                    earlier = tl.load(part, mask=mask_n & (i > 0), other=0)
                    tl.store(part, earlier + reduce_sum(dy * xhat, 0), mask=mask_n)
                if DB:
                    part = db_ptr + pid * n_cols + offs
                    earlier = tl.load(part, mask=mask_n & (i > 0), other=0)
                    tl.store(part, earlier + reduce_sum(dy, 0), mask=mask_n)
    if ONE_PASS:
        offs = tl.arange(0, BLOCK_N)
        if DW:
            tl.store(dw_ptr + pid * n_cols + offs, reduce_sum(dw_acc, 0), mask=offs < n_cols)
        if DB:
            tl.store(db_ptr + pid * n_cols + offs, reduce_sum(db_acc, 0), mask=offs < n_cols)


@triton.jit
def column_sum_kernel(part_ptr, out_ptr, n_parts, n_cols, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    """out[j] = sum over p of part[p, j] (contiguous (n_parts, n_cols)), rounded to out's dtype once."""
    pid = tl.program_id(0)
    offs = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs < n_cols
    acc = tl.full([BLOCK_P, BLOCK_N], 0, part_ptr.dtype.element_ty)
    for p in range(0, n_parts, BLOCK_P):
        parts = p + tl.arange(0, BLOCK_P)
        mask = (parts < n_parts)[:, None] & mask_n[None, :]
        acc += tl.load(part_ptr + parts[:, None] * n_cols + offs[None, :], mask=mask, other=0)
    tl.store(out_ptr + offs, reduce_sum(acc, 0).to(out_ptr.dtype.element_ty), mask=mask_n)


_backward = Launcher(row_backward_kernel)
_column_sum = Launcher(column_sum_kernel)


# --------------------------------------------------------------------------- launchers


def column_sum(parts: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """parts.sum(0) of a contiguous (n_parts, n_cols) buffer, in ``dtype``."""
    n_parts, n_cols = parts.shape
    out = torch.empty(n_cols, dtype=dtype, device=parts.device)
    # Narrow column blocks on a device: a program per 32 columns (24 for a 768-wide norm) keeps the reads of
    # a few hundred partial rows in parallel (256-wide blocks gave 3 programs there, ~48 us on an H200
    # against ATen's ~8 us). The interpreter prefers few, wide programs.
    block_n = min(next_power_of_2(n_cols), 1024 if triton.knobs.runtime.interpret else 32)
    block_p = min(next_power_of_2(n_parts), 16 if triton.knobs.runtime.interpret else 64)
    _column_sum((cdiv(n_cols, block_n),), parts, out, n_parts, n_cols, block_p, block_n, num_warps=4)
    return out


def row_backward(dy2, x2, mean, rstd, weight, *, rms, mask, dx_dtype, w_offset=0.0, ds2=None):
    """(dx (n_rows, n_cols) contiguous or None, dw or None, db or None) as ``mask`` (dx, dw, db) asks.
    w_offset: the forward scaled by weight + w_offset; ds2: a gradient added to dx (a residual sum's)."""
    n_rows, n_cols = x2.shape
    weight = packed(weight)
    want_dx, want_dw, want_db = mask
    if not any(mask):
        return None, None, None
    dx = torch.empty((n_rows, n_cols), dtype=dx_dtype, device=x2.device) if want_dx else None
    acc = torch.float64 if x2.dtype == torch.float64 else torch.float32
    param_dtype = weight.dtype if weight is not None else x2.dtype
    if n_rows == 0 or n_cols == 0:
        zeros = torch.zeros(n_cols, dtype=param_dtype, device=x2.device)
        return dx, zeros if want_dw else None, zeros.clone() if want_db else None
    cfg = row_config(n_rows, n_cols)
    programs = min(cdiv(n_rows, cfg.block_m), parallel_programs(x2.device))
    rows_per_program = cdiv(cdiv(n_rows, programs), cfg.block_m) * cfg.block_m
    programs = cdiv(n_rows, rows_per_program)
    # Uninitialized: the kernel writes every element (a zero fill would be a launch, and would keep the call
    # off the native layer's replay: a plan holds allocations and gems launches only).
    dw_part, db_part = [torch.empty((programs, n_cols), dtype=acc, device=x2.device) if want else None
                        for want in (want_dw, want_db)]
    any_out = dx if dx is not None else (dw_part if dw_part is not None else db_part)
    ds = dy2 if ds2 is None else ds2
    _backward(
        (programs,), dy2, x2, x2 if weight is None else weight, rstd if mean is None else mean, rstd, ds,
        any_out if dx is None else dx, any_out if dw_part is None else dw_part, any_out if db_part is None else db_part,
        n_rows, n_cols, rows_per_program, dy2.stride(0), dy2.stride(1), x2.stride(0), x2.stride(1), ds.stride(0),
        ds.stride(1), rms, weight is not None, float(w_offset), ds2 is not None, want_dx, want_dw, want_db,
        compute_dtype(x2.dtype), needs_int64(x2, dy2, ds),
        cfg.one_pass, cfg.block_m, cfg.block_n, num_warps=cfg.num_warps)
    return dx, *(column_sum(part, param_dtype) if part is not None else None for part in (dw_part, db_part))


def _row_norm_backward(dy, x2, mean, rstd, weight, rms, want_dx, want_dw, want_db, w_offset=0.0, ds=None):
    n_cols = x2.shape[1]
    return row_backward(as_rows(dy, n_cols), x2, mean, rstd, weight, rms=rms, mask=(want_dx, want_dw, want_db),
                        dx_dtype=x2.dtype, w_offset=w_offset, ds2=as_rows(ds, n_cols) if ds is not None else None)


# The backward of rms_norm's and the fused norms' autograd Functions, as an operator of gems' own
# (gems/runtime/operators.py): the native layer replays it like any call. dy and ds (x2's numel, any shape) are
# viewed as x2's rows; returns row_backward's (dx, dw, db), None where not wanted.
row_norm_backward = operators.backward(
    "row_norm_backward",
    "(Tensor dy, Tensor x2, Tensor? mean, Tensor rstd, Tensor? weight, bool rms, bool want_dx, bool want_dw, "
    "bool want_db, float w_offset=0.0, Tensor? ds=None) -> (Tensor, Tensor, Tensor)",
    _row_norm_backward)
