"""Row normalization that layer_norm, rms_norm, group_norm's forward and the fused norms of gems/ops/fused/
share. A tensor is viewed as (n_rows, n_cols) through its strides:

    layer:  mean = sum(x) / n,  rstd = 1 / sqrt(sum((x - mean)^2) / n + eps),  y = (x - mean) * rstd * w + b
    rms:    rstd = 1 / sqrt(sum(x^2) / n + eps),                               y = x * rstd * w

with w + w_offset in place of w where a norm scales by (1 + w) (Gemma's RMSNorm: w_offset = 1).

A row up to ``one_pass`` elements is loaded once into registers (one read of x, one write of y;
statistics in fp32, fp64 for fp64). Longer rows loop over blocks: two sweeps for the statistics, one for
y. The statistics are the corrected two-pass ones: m0 = sum(x) / n, d = x - m0, mean = m0 + sum(d) / n,
var = sum(d^2) / n - (sum(d) / n)^2: no sum(x^2) - n mean^2 cancellation, and a constant row gets its
exact value as mean and variance 0 (ATen's Welford does) where sum(x) / n rounds off it. Divisions by n
are correctly rounded (``div_n``). The backward is in rows_backward.py.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gems.ops.normalization.statistics import div_n, moments, rsqrt_rn
from gems.ops.reduction.planning import INT32_SAFE, reduce_sum, tile_k
from gems.runtime.launch import Launcher, cdiv, next_power_of_2, packed

# GPU: a row up to GPU_ONE_PASS stays in registers (32 fp32 values per thread at 16 warps); longer rows
# loop over blocks of GPU_LOOP_BLOCK, whose re-reads mostly hit L2. Short rows share a program up to
# GPU_TILE elements, so a program still reads a few KiB.
GPU_ONE_PASS, GPU_LOOP_BLOCK, GPU_TILE = 16384, 4096, 2048
# Interpreter: programs run one after another in Python (about 1 ms each), so tiles are large. Rows
# longer than INTERP_ONE_PASS loop, so that quick samples of a few thousand columns reach that path.
INTERP_TILE, INTERP_ONE_PASS, INTERP_LOOP_BLOCK = 1 << 14, 4096, 2048

def compute_dtype(dtype: torch.dtype):
    """fp64 computes in fp64, every other float in fp32."""
    return tl.float64 if dtype == torch.float64 else tl.float32


class RowConfig(NamedTuple):
    block_m: int  # rows per program (per loop step in the backward)
    block_n: int  # columns per load
    one_pass: bool  # the whole row fits in one block
    num_warps: int


@functools.lru_cache(maxsize=1024)
def row_config(n_rows: int, n_cols: int) -> RowConfig:
    n = next_power_of_2(n_cols)
    if not triton.knobs.runtime.interpret:  # unreached on the interpreter: the GPU's tiles
        one_pass = n <= GPU_ONE_PASS
        block_n = n if one_pass else GPU_LOOP_BLOCK
        block_m = min(next_power_of_2(n_rows), max(1, GPU_TILE // block_n))
        tile = block_m * block_n
        # About 16 values per thread: at 4096 fp16 columns, 8 warps hold one row in registers.
        return RowConfig(block_m, block_n, one_pass, 4 if tile <= 2048 else (8 if tile <= 4096 else 16))
    one_pass = n <= INTERP_ONE_PASS
    block_n = n if one_pass else INTERP_LOOP_BLOCK
    return RowConfig(min(next_power_of_2(n_rows), max(1, INTERP_TILE // block_n)), block_n, one_pass, 1)


def needs_int64(*tensors) -> bool:
    return any(t.numel() > INT32_SAFE for t in tensors)


def as_rows(x: torch.Tensor, n_cols: int) -> torch.Tensor:
    """``x`` as (n_rows, n_cols) without a copy where its strides allow, else a contiguous copy."""
    n_rows = x.numel() // n_cols if n_cols else 0
    try:
        return x.view(n_rows, n_cols)
    except RuntimeError:  # dims that do not merge
        return x.reshape(n_rows, n_cols)


def normalized_numel(x: torch.Tensor, normalized_shape, weight, bias) -> int:
    """ATen's layer_norm checks (RuntimeError, same messages); returns the row length."""
    shape = list(normalized_shape)
    if len(shape) == 0:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {shape}")
    if x.dim() < len(shape) or list(x.shape[x.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(x.shape)}")
    return math.prod(shape)


# --------------------------------------------------------------------------- kernels


@triton.jit
def _load_input(x_rows, stride_xn, r_rows, stride_rn, s_rows, offs, mask, FIRST: tl.constexpr,
                HAS_RESIDUAL: tl.constexpr, COMPUTE: tl.constexpr):
    """The tile to normalize; with a residual, s = x + r rounded as the unfused add would, stored by the
    first sweep and read back by later ones."""
    if HAS_RESIDUAL:
        if FIRST:
            x = tl.load(x_rows[:, None] + offs[None, :] * stride_xn, mask=mask, other=0).to(COMPUTE)
            r = tl.load(r_rows[:, None] + offs[None, :] * stride_rn, mask=mask, other=0).to(COMPUTE)
            s = (x + r).to(s_rows.dtype.element_ty)
            tl.store(s_rows[:, None] + offs[None, :], s, mask=mask)
            return s.to(COMPUTE)
        else:
            return tl.load(s_rows[:, None] + offs[None, :], mask=mask, other=0).to(COMPUTE)
    else:
        return tl.load(x_rows[:, None] + offs[None, :] * stride_xn, mask=mask, other=0).to(COMPUTE)


@triton.jit
def offset(w, W_OFFSET: tl.constexpr):
    """w + W_OFFSET; a constexpr, so that an offset 0 adds nothing (not even to -0.0's sign)."""
    if W_OFFSET != 0:
        w = w + W_OFFSET
    return w


@triton.jit
def _affine(xhat, rows, offs, mask, n_cols, w_ptr, b_ptr, n_groups, group_cols, HAS_W: tl.constexpr,
            HAS_B: tl.constexpr, GROUPED: tl.constexpr, W_OFFSET: tl.constexpr, COMPUTE: tl.constexpr):
    """xhat * (w + W_OFFSET) + b; GROUPED (group norm): column j of row n * n_groups + g has channel
    g * (n_cols / group_cols) + j / group_cols."""
    if GROUPED:
        idx = (rows % n_groups)[:, None] * (n_cols // group_cols) + offs[None, :] // group_cols
        if HAS_W:
            xhat = xhat * offset(tl.load(w_ptr + idx, mask=mask, other=0).to(COMPUTE), W_OFFSET)
        if HAS_B:
            xhat = xhat + tl.load(b_ptr + idx, mask=mask, other=0).to(COMPUTE)
    else:
        mask_n = offs < n_cols
        if HAS_W:
            xhat = xhat * offset(tl.load(w_ptr + offs, mask=mask_n, other=0).to(COMPUTE), W_OFFSET)[None, :]
        if HAS_B:
            xhat = xhat + tl.load(b_ptr + offs, mask=mask_n, other=0).to(COMPUTE)[None, :]
    return xhat


@triton.jit
def row_forward_kernel(
    x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, s_ptr, mean_ptr, rstd_ptr,
    n_rows, n_cols, stride_xm, stride_xn, stride_rm, stride_rn, n_groups, group_cols, eps,
    RMS: tl.constexpr, HAS_RESIDUAL: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr,
    STORE_STATS: tl.constexpr, GROUPED: tl.constexpr, W_OFFSET: tl.constexpr, COMPUTE: tl.constexpr,
    INT64: tl.constexpr, ONE_PASS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """y[m, :] = normalize(x[m, :] (+ r[m, :])) * w + b for the BLOCK_M rows of this program; y, s (the
    residual sum) are contiguous (n_rows, n_cols), mean and rstd contiguous (n_rows,)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = rows < n_rows
    x_rows = x_ptr + rows * stride_xm
    r_rows = r_ptr + rows * stride_rm
    s_rows = s_ptr + rows * n_cols
    y_rows = y_ptr + rows * n_cols
    if ONE_PASS:
        offs, mask = tile_k(0, n_cols, mask_m, INT64, BLOCK_N)
        x = _load_input(x_rows, stride_xn, r_rows, stride_rn, s_rows, offs, mask, True, HAS_RESIDUAL, COMPUTE)
        if RMS:
            mean = tl.full([BLOCK_M], 0, COMPUTE)
            rstd = rsqrt_rn(div_n(reduce_sum(x * x, 1), n_cols) + eps)
            xhat = x * rstd[:, None]
        else:
            mean = div_n(reduce_sum(x, 1), n_cols)
            d = tl.where(mask, x - mean[:, None], 0)
            mean, var = moments(mean, reduce_sum(d, 1), reduce_sum(d * d, 1), n_cols)
            rstd = rsqrt_rn(var + eps)
            xhat = tl.where(mask, x - mean[:, None], 0) * rstd[:, None]
        y = _affine(xhat, rows, offs, mask, n_cols, w_ptr, b_ptr, n_groups, group_cols, HAS_W, HAS_B, GROUPED,
                    W_OFFSET, COMPUTE)
        tl.store(y_rows[:, None] + offs[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
        for k in range(0, n_cols, BLOCK_N):
            offs, mask = tile_k(k, n_cols, mask_m, INT64, BLOCK_N)
            x = _load_input(x_rows, stride_xn, r_rows, stride_rn, s_rows, offs, mask, True, HAS_RESIDUAL, COMPUTE)
            if RMS:
                acc += x * x
            else:
                acc += x
        if RMS:
            mean = tl.full([BLOCK_M], 0, COMPUTE)
            rstd = rsqrt_rn(div_n(reduce_sum(acc, 1), n_cols) + eps)
        else:
            mean = div_n(reduce_sum(acc, 1), n_cols)
            acc = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
            acc2 = tl.full([BLOCK_M, BLOCK_N], 0, COMPUTE)
            for k in range(0, n_cols, BLOCK_N):
                offs, mask = tile_k(k, n_cols, mask_m, INT64, BLOCK_N)
                x = _load_input(x_rows, stride_xn, r_rows, stride_rn, s_rows, offs, mask, False, HAS_RESIDUAL,
                                COMPUTE)
                d = tl.where(mask, x - mean[:, None], 0)
                acc += d
                acc2 += d * d
            mean, var = moments(mean, reduce_sum(acc, 1), reduce_sum(acc2, 1), n_cols)
            rstd = rsqrt_rn(var + eps)
        for k in range(0, n_cols, BLOCK_N):
            offs, mask = tile_k(k, n_cols, mask_m, INT64, BLOCK_N)
            x = _load_input(x_rows, stride_xn, r_rows, stride_rn, s_rows, offs, mask, False, HAS_RESIDUAL, COMPUTE)
            xhat = (x - mean[:, None]) * rstd[:, None]
            y = _affine(xhat, rows, offs, mask, n_cols, w_ptr, b_ptr, n_groups, group_cols, HAS_W, HAS_B, GROUPED,
                        W_OFFSET, COMPUTE)
            tl.store(y_rows[:, None] + offs[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    if STORE_STATS:
        tl.store(mean_ptr + rows, mean.to(mean_ptr.dtype.element_ty), mask=mask_m)
        tl.store(rstd_ptr + rows, rstd.to(rstd_ptr.dtype.element_ty), mask=mask_m)


_forward = Launcher(row_forward_kernel)


# --------------------------------------------------------------------------- launchers


def row_forward(x2, eps, *, rms, weight=None, bias=None, residual=None, stats_dtype=None, groups=None,
                w_offset=0.0):
    """Normalize the rows of the 2-D view ``x2``. Returns (y, s, mean, rstd): y and s (the residual sum,
    or None) contiguous (n_rows, n_cols); mean and rstd (n_rows,) in ``stats_dtype`` or None when it
    is None. groups: (n_groups, group_cols) for group norm's per-channel weight and bias; w_offset: the
    weight scales by w + w_offset."""
    n_rows, n_cols = x2.shape
    weight, bias = packed(weight), packed(bias)
    y = torch.empty((n_rows, n_cols), dtype=x2.dtype, device=x2.device)
    s = torch.empty_like(y) if residual is not None else None
    mean, rstd = [torch.empty(n_rows, dtype=stats_dtype, device=x2.device) if stats_dtype else None for _ in "mr"]
    if n_rows == 0 or n_cols == 0:
        return y, s, mean, rstd
    cfg = row_config(n_rows, n_cols)
    r = residual if residual is not None else x2
    n_groups, group_cols = groups or (1, 1)
    _forward(
        (cdiv(n_rows, cfg.block_m),), x2, r, x2 if weight is None else weight, x2 if bias is None else bias, y,
        y if s is None else s, y if mean is None else mean, y if rstd is None else rstd,
        n_rows, n_cols, x2.stride(0), x2.stride(1), r.stride(0), r.stride(1), n_groups, group_cols, eps,
        rms, residual is not None, weight is not None, bias is not None, mean is not None, groups is not None,
        float(w_offset), compute_dtype(x2.dtype), needs_int64(x2, r), cfg.one_pass, cfg.block_m, cfg.block_n,
        num_warps=cfg.num_warps)
    return y, s, mean, rstd
